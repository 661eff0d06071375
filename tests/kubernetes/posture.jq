# The security posture issue 22 asks of every workload in contrib/kubernetes (a Job or a
# DaemonSet, as JSON): one line per property it lacks, nothing when it has them all.
# Usage: jq -r -f posture.jq MANIFEST.json
.kind as $kind
| .spec.template.metadata.labels as $podLabels
| .spec.template.spec as $pod
| [$pod.volumes[]? | select(.hostPath) | .name] as $hostVolumes
| (if $pod.hostPID == true then "hostPID is true" else empty end),
  (if $pod.hostNetwork == true then "hostNetwork is true" else empty end),
  (if $pod.hostIPC == true then "hostIPC is true" else empty end),
  (if $pod.automountServiceAccountToken != false then "the service account token is mounted" else empty end),
  (if $pod.securityContext.runAsNonRoot != true then "runAsNonRoot is not true" else empty end),
  (if ($pod.securityContext.runAsUser // 0) == 0 then "runAsUser is root or unset" else empty end),
  (if $pod.securityContext.seccompProfile.type != "RuntimeDefault" then "seccompProfile is not RuntimeDefault" else empty end),
  (if ([$pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]?
        .matchExpressions[]? | select(.key == "nvidia.com/gpu.present")] | length) == 0
   then "no node affinity for GPU nodes (nvidia.com/gpu.present)" else empty end),
  ($pod.volumes[]? | select(.persistentVolumeClaim and .persistentVolumeClaim.readOnly != true)
   | "volume \(.name): the claim is not mounted readOnly"),
  ($pod.containers[] as $c
   | ($c.volumeMounts[]? | select(.name as $name | $hostVolumes | index($name)) | select(.readOnly != true)
      | "\($c.name): host volume \(.name) is mounted writable"),
     (if $c.securityContext.allowPrivilegeEscalation != false then "\($c.name): allowPrivilegeEscalation is not false" else empty end),
     (if $c.securityContext.readOnlyRootFilesystem != true then "\($c.name): readOnlyRootFilesystem is not true" else empty end),
     (if $c.securityContext.privileged == true then "\($c.name): privileged" else empty end),
     (if (($c.securityContext.capabilities.drop // []) | index("ALL")) == null then "\($c.name): capabilities are not all dropped" else empty end),
     (if $c.resources.limits.cpu == null or $c.resources.limits.memory == null then "\($c.name): no cpu and memory limits" else empty end),
     (if [$c.env[]? | select(.name == "NODE_NAME") | .valueFrom.fieldRef.fieldPath] != ["spec.nodeName"]
      then "\($c.name): NODE_NAME is not the downward API's spec.nodeName" else empty end)),
  (if $kind == "Job" then
     (if .spec.parallelism != .spec.completions then "parallelism and completions differ" else empty end),
     (if $pod.restartPolicy != "Never" then "restartPolicy is not Never" else empty end),
     (if .spec.backoffLimit == null then "no backoffLimit" else empty end),
     (if .spec.ttlSecondsAfterFinished == null then "no ttlSecondsAfterFinished" else empty end),
     (if .spec.activeDeadlineSeconds == null then "no activeDeadlineSeconds (Pending pods would wait forever)" else empty end),
     (if ([$pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[]?
           | select(.topologyKey == "kubernetes.io/hostname") | .labelSelector.matchLabels
           | select(. != null and length > 0)
           | select(to_entries | all(.value == $podLabels[.key]))] | length) == 0
      then "no required anti-affinity on kubernetes.io/hostname against its own pods" else empty end)
   else empty end)
