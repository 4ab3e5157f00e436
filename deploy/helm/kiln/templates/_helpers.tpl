{{/* The objects' name: the release's, with kiln in it. */}}
{{- define "kiln.fullname" -}}
{{- if contains "kiln" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-kiln" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* What selects the server's pods. */}}
{{- define "kiln.selectorLabels" -}}
app.kubernetes.io/name: kiln
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Every object's labels. */}}
{{- define "kiln.labels" -}}
{{ include "kiln.selectorLabels" . }}
app.kubernetes.io/version: {{ include "kiln.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kiln.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kiln.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kiln.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "kiln.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "kiln.tag" .) -}}
{{- end -}}

{{/* The gang scheduler, "" for none. */}}
{{- define "kiln.gangScheduler" -}}
{{- $gs := .Values.backend.kubernetes.gangScheduler -}}
{{- if ne $gs "none" }}{{ $gs }}{{ end -}}
{{- end -}}

{{/* Values that cannot work together fail the rendering, saying why. */}}
{{- define "kiln.validate" -}}
{{- if and (eq .Values.store.type "sqlite") (gt (int .Values.replicas) 1) -}}
{{- fail "replicas > 1 needs store.type postgres: two servers must never open one SQLite file" -}}
{{- end -}}
{{- if and (eq .Values.store.type "postgres") (not .Values.store.postgres.secretName) -}}
{{- fail "store.type postgres needs store.postgres.secretName: the Secret holding the store's URL" -}}
{{- end -}}
{{- if and (eq .Values.store.type "postgres") (gt (int .Values.replicas) 1) (not .Values.store.postgres.secretKeySecretName) -}}
{{- fail "replicas of one database must seal secrets with one key: set store.postgres.secretKeySecretName" -}}
{{- end -}}
{{- if and (eq .Values.backend.type "local") (gt (int .Values.replicas) 1) -}}
{{- fail "backend local runs tasks in the server's pod: a leader that moves to another pod cannot adopt them; use one replica, or backend kubernetes" -}}
{{- end -}}
{{- if and .Values.party.advertise (not .Values.party.name) -}}
{{- fail "party.advertise needs party.name" -}}
{{- end -}}
{{- end -}}
