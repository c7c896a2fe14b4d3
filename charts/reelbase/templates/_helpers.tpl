{{/*
Shared helpers. Component helpers take a context built once per component:
  (dict "root" $ "name" <component name> "c" <component values>)
*/}}

{{- define "reelbase.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "reelbase.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "reelbase.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "reelbase.selectorLabels" -}}
app.kubernetes.io/name: {{ include "reelbase.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "reelbase.labels" -}}
helm.sh/chart: {{ include "reelbase.chart" . }}
{{ include "reelbase.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: reelbase
{{- end -}}

{{/* Names of shared objects. */}}
{{- define "reelbase.configMapName" -}}
{{- printf "%s-config" (include "reelbase.fullname" .) -}}
{{- end -}}

{{- define "reelbase.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "reelbase.fullname" .)) -}}
{{- end -}}

{{- /* The Secret holding INTERNAL_AUTH_SECRET: the named one, else <fullname>-internal-auth (internal-auth-secret.yaml). */ -}}
{{- define "reelbase.internalAuthSecretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-internal-auth" (include "reelbase.fullname" .)) -}}
{{- end -}}

{{- /* The Secret holding SECRETS_KEY: the named one, else <fullname>-secrets-key (secrets-key-secret.yaml). */ -}}
{{- define "reelbase.secretsKeySecretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets-key" (include "reelbase.fullname" .)) -}}
{{- end -}}

{{- define "reelbase.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "reelbase.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* "true" when a component is enabled; a component without the key is enabled. */}}
{{- define "reelbase.enabled" -}}
{{- if or (not (hasKey . "enabled")) .enabled -}}true{{- end -}}
{{- end -}}

{{/* Component helpers: argument is the component context. */}}
{{- define "reelbase.componentFullname" -}}
{{- printf "%s-%s" (include "reelbase.fullname" .root) .name -}}
{{- end -}}

{{- define "reelbase.componentSelectorLabels" -}}
{{ include "reelbase.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "reelbase.componentLabels" -}}
{{ include "reelbase.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/*
The effective per-component settings as YAML (read back with fromYaml): for every key of
`defaults`, the component's own value when it has the key (hasKey, so an explicit 0, false, {}
or [] is kept), else the default. podAnnotations and podLabels are merged, the component's winning.
Argument: the component context.
*/}}
{{- define "reelbase.settings" -}}
{{- $s := dict -}}
{{- range $key, $default := .root.Values.defaults -}}
{{- $_ := set $s $key (ternary (index $.c $key) $default (hasKey $.c $key)) -}}
{{- end -}}
{{- $_ := set $s "podAnnotations" (merge (dict) (.c.podAnnotations | default dict) (.root.Values.defaults.podAnnotations | default dict)) -}}
{{- $_ := set $s "podLabels" (merge (dict) (.c.podLabels | default dict) (.root.Values.defaults.podLabels | default dict)) -}}
{{- toYaml $s -}}
{{- end -}}

{{- define "reelbase.image" -}}
{{- $img := .c.image | default dict -}}
{{- $values := .root.Values.image -}}
{{- $repo := $img.repository | default (ternary (printf "%s/%s" $values.registry ($img.name | default .name)) ($img.name | default .name) (ne $values.registry "")) -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $repo $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (toString ($img.tag | default $values.tag | default .root.Chart.AppVersion)) -}}
{{- end -}}
{{- end -}}

{{/* "true" when the component's replicas are owned by its HorizontalPodAutoscaler. */}}
{{- define "reelbase.autoscaled" -}}
{{- $a := .c.autoscaling | default dict -}}
{{- if $a.enabled -}}true{{- end -}}
{{- end -}}

{{/* "true" when ScaledObjects are rendered: keda.enabled and the cluster serves the CRD (or requireCrd is off). */}}
{{- define "reelbase.kedaActive" -}}
{{- $k := .Values.keda | default dict -}}
{{- if and $k.enabled (or (not $k.requireCrd) (.Capabilities.APIVersions.Has "keda.sh/v1alpha1/ScaledObject")) -}}true{{- end -}}
{{- end -}}

{{/*
"true" when a component scales on its JetStream consumer's backlog through KEDA (autoscaling with
`jetstream`, and KEDA active); its CPU HPA is then not rendered. Argument: the component context.
*/}}
{{- define "reelbase.queueScaled" -}}
{{- $a := .c.autoscaling | default dict -}}
{{- if and $a.enabled $a.jetstream (include "reelbase.kedaActive" .root) -}}true{{- end -}}
{{- end -}}

{{/* Variable name carrying a component's gRPC address: media-transcode -> MEDIA_TRANSCODE_ADDR. */}}
{{- define "reelbase.addrEnv" -}}
{{- printf "%s_ADDR" (. | upper | replace "-" "_") -}}
{{- end -}}

{{/* Egress/ingress port list of one component (numbers, TCP). */}}
{{- define "reelbase.portList" -}}
{{- range $pname, $p := . }}
- port: {{ $p.port }}
  protocol: TCP
{{- end }}
{{- end -}}

{{- define "reelbase.serviceMonitorEnabled" -}}
{{- $sm := .Values.metrics.serviceMonitor -}}
{{- if and $sm.enabled (or (not $sm.requireCrd) (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) -}}true{{- end -}}
{{- end -}}

{{/* DATABASE_URL built from postgresql.* unless postgresql.url is given. */}}
{{- define "reelbase.databaseUrl" -}}
{{- $pg := .Values.postgresql -}}
{{- if $pg.url -}}
{{- $pg.url -}}
{{- else -}}
{{- $auth := urlquery $pg.user -}}
{{- if $pg.password -}}{{- $auth = printf "%s:%s" $auth (urlquery $pg.password) -}}{{- end -}}
{{- printf "postgresql://%s@%s:%v/%s" $auth $pg.host $pg.port $pg.database -}}
{{- if $pg.sslMode -}}{{- printf "?sslmode=%s" $pg.sslMode -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* Checksum of everything the pods read from the ConfigMap and the chart-made Secret. */}}
{{- define "reelbase.configChecksum" -}}
{{- $cm := include (print .Template.BasePath "/configmap.yaml") . -}}
{{- $secret := include (print .Template.BasePath "/secret.yaml") . -}}
{{- printf "%s\n%s" $cm $secret | sha256sum -}}
{{- end -}}
