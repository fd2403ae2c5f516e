// Package clusters is the home of the member clusters as the control plane
// sees them: reaching a member (clusterclient, with the rights Karmada's
// identity holds there, memberrights), knowing whether it is Ready
// (clusterready) and what it runs (clusterstatus for push-mode members,
// clusterlease for pull-mode members' heartbeats), its execution namespace
// and taints (cluster, clustertaint), renewing its credentials
// (tokenrenewal), and matching it against a ClusterAffinity
// (clusteraffinity). A pull-mode member reports its own status through its
// agent (internal/agent), with the same clusterstatus controller.
package clusters
