{{/*
The Deployment of one of our controller binaries (karmada-controller-manager,
karmada-scheduler): its own identity's kubeconfig, leader election,
authenticated HTTPS /metrics on 8080 (the control plane's CA authenticates
client certificates; tokens are reviewed by the karmada-apiserver), plain
/healthz and /readyz on 10357 for the kubelet. Called with
(dict "root" $ "name" "karmada-scheduler" "c" .Values.scheduler "args" (list ...));
"estimatorClient" true mounts the certificates that reach the scheduler
estimators (Secret karmada-scheduler-estimator-client) on /etc/karmada/estimator.
*/}}
{{- define "karmada.controller" -}}
{{- $c := .c -}}
{{- $root := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "karmada.commonLabels" $root | nindent 4 }}
    {{- toYaml $c.labels | nindent 4 }}
spec:
  replicas: {{ $c.replicaCount }}
  strategy:
    {{- toYaml $c.strategy | nindent 4 }}
  selector:
    matchLabels:
      {{- toYaml $c.labels | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "karmada.commonLabels" $root | nindent 8 }}
        {{- toYaml $c.labels | nindent 8 }}
        {{- with $c.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $c.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      {{- include "karmada.podSecurityContext" $root | nindent 6 }}
      {{- include "karmada.imagePullSecrets" (dict "root" $root "component" $c) | nindent 6 }}
      {{- include "karmada.scheduling" (dict "component" $c "labels" $c.labels) | nindent 6 }}
      containers:
        - name: {{ .name }}
          image: {{ include "karmada.image" (dict "root" $root "image" $c.image) }}
          imagePullPolicy: {{ $c.image.pullPolicy }}
          command:
            - /bin/{{ .name }}
            - --kubeconfig=/etc/karmada/config/kubeconfig
            - --leader-elect=true
            - --leader-elect-lease-duration={{ $root.Values.leaderElection.leaseDuration }}
            - --leader-elect-renew-deadline={{ $root.Values.leaderElection.renewDeadline }}
            - --leader-elect-retry-period={{ $root.Values.leaderElection.retryPeriod }}
            - --metrics-bind-address=0.0.0.0:8080
            - --client-ca-file=/etc/karmada/pki/ca.crt
            - --health-probe-bind-address=0.0.0.0:10357
            - --v=2
            {{- range .args }}
            - {{ . }}
            {{- end }}
            {{- include "karmada.extraArgs" $c.extraArgs | nindent 12 }}
          ports:
            - name: metrics
              containerPort: 8080
            - name: health
              containerPort: 10357
          livenessProbe:
            httpGet:
              path: /healthz
              port: 10357
            initialDelaySeconds: 10
            periodSeconds: 10
            failureThreshold: 6
          readinessProbe:
            httpGet:
              path: /readyz
              port: 10357
            periodSeconds: 5
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          {{- include "karmada.containerSecurityContext" $root | nindent 10 }}
          volumeMounts:
            - name: kubeconfig
              mountPath: /etc/karmada/config
              readOnly: true
            - name: pki
              mountPath: /etc/karmada/pki
              readOnly: true
            - name: tmp
              mountPath: /tmp
            {{- if .estimatorClient }}
            - name: estimator-client
              mountPath: /etc/karmada/estimator
              readOnly: true
            {{- end }}
      volumes:
        - name: kubeconfig
          secret:
            secretName: {{ .name }}-kubeconfig
        - name: pki
          secret:
            secretName: karmada-cert
            items:
              - {key: ca.crt, path: ca.crt}
        - name: tmp
          emptyDir: {}
        {{- if .estimatorClient }}
        - name: estimator-client
          secret:
            secretName: karmada-scheduler-estimator-client
        {{- end }}
---
{{ include "karmada.pdb" (dict "root" $root "name" .name "labels" $c.labels) }}
{{- end -}}
