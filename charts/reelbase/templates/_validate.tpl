{{/*
Checks a JSON schema cannot express, included first by every template so that nothing renders
from bad values. values.schema.json has already refused unknown keys, wrong types and values out
of range (Helm checks it before rendering); what is left are references: between a component and
its own ports, between components, and between components and the release-wide settings. Every
problem is collected and reported in one `fail`.
*/}}

{{- define "reelbase.validate" -}}
{{- $errors := list -}}
{{- $v := .Values -}}
{{- $usedDeps := list -}}

{{- range $name, $c := $v.components -}}
{{- $at := printf "components.%s" $name -}}
{{- if include "reelbase.enabled" $c -}}
{{- $fullname := include "reelbase.componentFullname" (dict "root" $ "name" $name) -}}
{{- if gt (len $fullname) 63 -}}
{{- $errors = append $errors (printf "%s: object name %s is longer than 63 characters (shorten the release name or fullnameOverride)" $at $fullname) -}}
{{- end -}}
{{- $ports := $c.ports | default dict -}}

{{- /* metrics and probes name one of the component's own ports */ -}}
{{- $metrics := ternary $c.metrics $v.defaults.metrics (hasKey $c "metrics") | default dict -}}
{{- if not (hasKey $ports ($metrics.port | default "")) -}}
{{- $errors = append $errors (printf "%s: metrics port %q is not one of its ports" $at ($metrics.port | default "")) -}}
{{- end -}}
{{- $probes := $c.probes | default dict -}}
{{- if not (hasKey $ports ($probes.port | default "")) -}}
{{- $errors = append $errors (printf "%s.probes.port %q is not one of its ports" $at ($probes.port | default "")) -}}
{{- end -}}
{{- range $kind := list "liveness" "readiness" -}}
{{- $own := index $probes $kind | default dict -}}
{{- if and $own.port (not (hasKey $ports $own.port)) -}}
{{- $errors = append $errors (printf "%s.probes.%s.port %q is not one of its ports" $at $kind $own.port) -}}
{{- end -}}
{{- end -}}

{{- /* components it calls exist, are enabled and serve gRPC */ -}}
{{- $usedDeps = concat $usedDeps ($c.uses | default list) -}}
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

{{- $a := $c.autoscaling | default dict -}}
{{- if and $a.enabled (lt (int ($a.maxReplicas | default 0)) (max 1 (int ($a.minReplicas | default 0)) | int)) -}}
{{- $errors = append $errors (printf "%s.autoscaling.maxReplicas must be >= minReplicas and >= 1" $at) -}}
{{- end -}}
{{- end -}}
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
