{{/*
Values checks, included first by every template so that nothing renders from bad values.
Every problem is collected and reported in one `fail`: unknown keys, keys of other charts'
conventions that this chart names differently, and references between components that do not hold.
*/}}

{{- define "reelbase.validate" -}}
{{- $errors := list -}}
{{- $v := .Values -}}

{{- /* Keys this chart spells differently: old -> where the setting lives here. */ -}}
{{- $renamedTop := dict
  "replicaCount" "defaults.replicaCount (or components.<name>.replicaCount)"
  "resources" "defaults.resources (or components.<name>.resources)"
  "podSecurityContext" "defaults.podSecurityContext (runAsNonRoot and seccomp are fixed by the chart)"
  "securityContext" "nothing: the container security context is fixed by the chart"
  "serviceMonitor" "metrics.serviceMonitor"
  "autoscaling" "components.<name>.autoscaling"
  "hpa" "components.<name>.autoscaling"
  "database" "postgresql"
  "minio" "s3"
  "existingSecret" "secrets.existingSecret"
  "env" "config.extra (every component) or components.<name>.env"
  "services" "components"
  "server" "components"
-}}
{{- $knownTop := list "global" "nameOverride" "fullnameOverride" "image" "imagePullSecrets" "serviceAccount" "config" "postgresql" "nats" "s3" "secrets" "defaults" "components" "metrics" "networkPolicy" "keda" "ingress" -}}
{{- range $key, $_ := $v -}}
{{- if hasKey $renamedTop $key -}}
{{- $errors = append $errors (printf "%s is not a key of this chart: use %s" $key (index $renamedTop $key)) -}}
{{- else if not (has $key $knownTop) -}}
{{- $errors = append $errors (printf "unknown key %s (known: %s)" $key (join ", " $knownTop)) -}}
{{- end -}}
{{- end -}}

{{- $knownDefaults := list "replicaCount" "revisionHistoryLimit" "strategy" "resources" "podAnnotations" "podLabels" "podSecurityContext" "priorityClassName" "nodeSelector" "tolerations" "affinity" "topologySpread" "terminationGracePeriodSeconds" "preStopSleepSeconds" "tmpSizeLimit" "metrics" "pdb" "probeTimings" -}}
{{- $renamedDefaults := dict "probes" "defaults.probeTimings" "podDisruptionBudget" "defaults.pdb" "replicas" "defaults.replicaCount" -}}
{{- range $key, $_ := $v.defaults -}}
{{- if hasKey $renamedDefaults $key -}}
{{- $errors = append $errors (printf "defaults.%s is not a key of this chart: use %s" $key (index $renamedDefaults $key)) -}}
{{- else if not (has $key $knownDefaults) -}}
{{- $errors = append $errors (printf "unknown key defaults.%s (known: %s)" $key (join ", " $knownDefaults)) -}}
{{- end -}}
{{- end -}}
{{- $defaultPdb := $v.defaults.pdb | default dict -}}
{{- if eq (len (pick $defaultPdb "minAvailable" "maxUnavailable")) 0 -}}
{{- $errors = append $errors "defaults.pdb: set minAvailable or maxUnavailable" -}}
{{- else if and (hasKey $defaultPdb "minAvailable") (hasKey $defaultPdb "maxUnavailable") -}}
{{- $errors = append $errors "defaults.pdb: set minAvailable or maxUnavailable, not both" -}}
{{- end -}}

{{- $renamedComponent := dict
  "replicas" "replicaCount"
  "grpcPort" "ports.grpc.port"
  "httpPort" "ports.http.port"
  "port" "ports.<name>.port"
  "extraEnv" "env"
  "envFrom" "env (NAME: { valueFrom: ... })"
  "hpa" "autoscaling"
  "keda" "autoscaling.jetstream (and the top-level keda.enabled)"
  "probe" "probes"
  "livenessProbe" "probes.liveness"
  "readinessProbe" "probes.readiness"
  "startupProbe" "probes.startup"
  "dependencies" "uses"
  "securityContext" "nothing: the container security context is fixed by the chart"
  "podDisruptionBudget" "pdb"
-}}
{{- $knownComponent := concat (list "enabled" "image" "command" "args" "ports" "probes" "uses" "calls" "public" "env" "service" "autoscaling") $knownDefaults -}}
{{- $knownDeps := list "postgresql" "nats" "s3" -}}
{{- $usedDeps := list -}}
{{- $kedaScaled := false -}}
{{- $dnsLabel := "^[a-z]([-a-z0-9]*[a-z0-9])?$" -}}

{{- range $name, $c := $v.components -}}
{{- $at := printf "components.%s" $name -}}
{{- if not (kindIs "map" $c) -}}
{{- $errors = append $errors (printf "%s must be a map of settings" $at) -}}
{{- else -}}
{{- range $key, $_ := $c -}}
{{- if hasKey $renamedComponent $key -}}
{{- $errors = append $errors (printf "%s.%s is not a key of this chart: use %s.%s" $at $key $at (index $renamedComponent $key)) -}}
{{- else if not (has $key $knownComponent) -}}
{{- $errors = append $errors (printf "unknown key %s.%s (known: %s)" $at $key (join ", " $knownComponent)) -}}
{{- end -}}
{{- end -}}

{{- if include "reelbase.enabled" $c -}}
{{- $fullname := include "reelbase.componentFullname" (dict "root" $ "name" $name) -}}
{{- if not (regexMatch $dnsLabel $name) -}}
{{- $errors = append $errors (printf "%s: component names must be lower-case DNS labels" $at) -}}
{{- end -}}
{{- if gt (len $fullname) 63 -}}
{{- $errors = append $errors (printf "%s: object name %s is longer than 63 characters (shorten the release name or fullnameOverride)" $at $fullname) -}}
{{- end -}}

{{- /* replicaCount: own or default, an integer >= 0 */ -}}
{{- $replicas := ternary $c.replicaCount $v.defaults.replicaCount (hasKey $c "replicaCount") -}}
{{- if not (regexMatch "^[0-9]+$" (toString $replicas)) -}}
{{- $errors = append $errors (printf "%s.replicaCount must be an integer >= 0, got %v" $at $replicas) -}}
{{- end -}}

{{- /* ports */ -}}
{{- $ports := $c.ports | default dict -}}
{{- if not $ports -}}
{{- $errors = append $errors (printf "%s.ports: at least one port is needed (metrics are scraped from one)" $at) -}}
{{- end -}}
{{- range $pname, $p := $ports -}}
{{- if or (not (regexMatch $dnsLabel $pname)) (gt (len $pname) 15) -}}
{{- $errors = append $errors (printf "%s.ports.%s: port names are DNS labels of at most 15 characters" $at $pname) -}}
{{- end -}}
{{- if or (not (kindIs "map" $p)) (not (regexMatch "^[0-9]+$" (toString ($p.port | default "")))) -}}
{{- $errors = append $errors (printf "%s.ports.%s.port must be a port number" $at $pname) -}}
{{- end -}}
{{- end -}}

{{- /* metrics port */ -}}
{{- $metrics := ternary $c.metrics $v.defaults.metrics (hasKey $c "metrics") | default dict -}}
{{- if not (hasKey $ports ($metrics.port | default "")) -}}
{{- $errors = append $errors (printf "%s: metrics port %q is not one of its ports" $at ($metrics.port | default "")) -}}
{{- end -}}

{{- /* probes */ -}}
{{- $probes := $c.probes | default dict -}}
{{- if not (has ($probes.type | default "") (list "grpc" "http")) -}}
{{- $errors = append $errors (printf "%s.probes.type must be grpc or http" $at) -}}
{{- end -}}
{{- if not (hasKey $ports ($probes.port | default "")) -}}
{{- $errors = append $errors (printf "%s.probes.port %q is not one of its ports" $at ($probes.port | default "")) -}}
{{- end -}}
{{- range $kind := list "liveness" "readiness" "startup" -}}
{{- $own := index $probes $kind | default dict -}}
{{- if and $own.type (not (has $own.type (list "grpc" "http"))) -}}
{{- $errors = append $errors (printf "%s.probes.%s.type must be grpc or http" $at $kind) -}}
{{- end -}}
{{- if and $own.port (not (hasKey $ports $own.port)) -}}
{{- $errors = append $errors (printf "%s.probes.%s.port %q is not one of its ports" $at $kind $own.port) -}}
{{- end -}}
{{- if and (eq $kind "startup") (or $own.type $own.port $own.path $own.service) -}}
{{- $errors = append $errors (printf "%s.probes.startup takes timings only (it probes like liveness)" $at) -}}
{{- end -}}
{{- end -}}

{{- /* dependencies and calls */ -}}
{{- range $dep := $c.uses | default list -}}
{{- if not (has $dep $knownDeps) -}}
{{- $errors = append $errors (printf "%s.uses: unknown dependency %q (known: %s)" $at $dep (join ", " $knownDeps)) -}}
{{- else -}}
{{- $usedDeps = append $usedDeps $dep -}}
{{- end -}}
{{- end -}}
{{- range $callee := $c.calls | default list -}}
{{- $target := index $v.components $callee -}}
{{- if eq $callee $name -}}
{{- $errors = append $errors (printf "%s.calls: a component does not call itself" $at) -}}
{{- else if not (kindIs "map" $target) -}}
{{- $errors = append $errors (printf "%s.calls: no component %q" $at $callee) -}}
{{- else if not (include "reelbase.enabled" $target) -}}
{{- $errors = append $errors (printf "%s.calls %s, which is disabled (enable it or disable %s)" $at $callee $name) -}}
{{- else if not (and (kindIs "map" $target.ports) (hasKey $target.ports "grpc")) -}}
{{- $errors = append $errors (printf "%s.calls %s, which has no grpc port" $at $callee) -}}
{{- end -}}
{{- end -}}

{{- /* pdb (an inherited defaults.pdb is checked once, below the loop) */ -}}
{{- if hasKey $c "pdb" -}}
{{- $pdb := $c.pdb | default dict -}}
{{- if eq (len (pick $pdb "minAvailable" "maxUnavailable")) 0 -}}
{{- $errors = append $errors (printf "%s.pdb: set minAvailable or maxUnavailable" $at) -}}
{{- else if and (hasKey $pdb "minAvailable") (hasKey $pdb "maxUnavailable") -}}
{{- $errors = append $errors (printf "%s.pdb: set minAvailable or maxUnavailable, not both" $at) -}}
{{- end -}}
{{- end -}}

{{- /* autoscaling */ -}}
{{- $a := $c.autoscaling | default dict -}}
{{- if $a.enabled -}}
{{- if lt (int ($a.maxReplicas | default 0)) (max 1 (int ($a.minReplicas | default 0)) | int) -}}
{{- $errors = append $errors (printf "%s.autoscaling.maxReplicas must be >= minReplicas and >= 1" $at) -}}
{{- end -}}
{{- if and $v.keda.enabled $a.jetstream -}}
{{- $kedaScaled = true -}}
{{- if not (and $a.jetstream.stream $a.jetstream.consumer) -}}
{{- $errors = append $errors (printf "%s.autoscaling.jetstream needs stream and consumer" $at) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* cross-cutting */ -}}
{{- $logLevels := list "fatal" "error" "warn" "info" "debug" "trace" "silent" -}}
{{- if not (has $v.config.logLevel $logLevels) -}}
{{- $errors = append $errors (printf "config.logLevel must be one of %s" (join ", " $logLevels)) -}}
{{- end -}}
{{- range $k, $_ := $v.config.extra | default dict -}}
{{- if has $k (list "LOG_LEVEL" "NATS_URL" "NATS_PREFIX" "S3_ENDPOINT" "S3_BUCKET") -}}
{{- $errors = append $errors (printf "config.extra.%s is set by the chart from its own key (config.logLevel, nats.url, config.natsPrefix, s3.*)" $k) -}}
{{- else if not (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" $k) -}}
{{- $errors = append $errors (printf "config.extra.%s is not a valid variable name" $k) -}}
{{- end -}}
{{- end -}}
{{- if not (regexMatch "^[A-Za-z0-9_]*$" (toString $v.config.natsPrefix)) -}}
{{- $errors = append $errors "config.natsPrefix: letters, digits and _ only" -}}
{{- end -}}
{{- if $v.networkPolicy.enabled -}}
{{- range $dep := uniq $usedDeps -}}
{{- if not (hasKey ($v.networkPolicy.egress | default dict) $dep) -}}
{{- $errors = append $errors (printf "networkPolicy.egress.%s is missing (a component uses %s)" $dep $dep) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (has "postgresql" $usedDeps) (not $v.secrets.existingSecret) (not $v.postgresql.url) (not $v.postgresql.host) -}}
{{- $errors = append $errors "postgresql: set host (or url), or name a Secret in secrets.existingSecret" -}}
{{- end -}}
{{- $internalAuth := toString ($v.secrets.internalAuthSecret | default "") -}}
{{- if and $internalAuth (lt (len $internalAuth) 32) -}}
{{- $errors = append $errors "secrets.internalAuthSecret must be at least 32 bytes (e.g. `openssl rand -base64 32`), or empty for a random one" -}}
{{- end -}}
{{- if and $kedaScaled (not $v.nats.monitoringEndpoint) -}}
{{- $errors = append $errors "nats.monitoringEndpoint is needed by the KEDA nats-jetstream trigger" -}}
{{- end -}}
{{- if $v.ingress.enabled -}}
{{- $gw := index $v.components "gateway" -}}
{{- if not (and (kindIs "map" $gw) (include "reelbase.enabled" $gw)) -}}
{{- $errors = append $errors "ingress.enabled needs the gateway component" -}}
{{- end -}}
{{- end -}}

{{- if $errors -}}
{{- fail (printf "\n\nreelbase: invalid values:\n  - %s\n" (join "\n  - " $errors)) -}}
{{- end -}}
{{- end -}}
