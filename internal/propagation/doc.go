// Package propagation is the home of the propagation pipeline, the path a
// resource template takes from the control plane to the members and its
// status takes back. Its packages, in the order a template meets them:
//
//   - detector: claims each template for the policy that selects it
//     (policymatch decides which) and keeps one binding per template;
//   - (the scheduler, internal/scheduler, places the binding on clusters);
//   - binding: turns a scheduled binding into one Work per cluster, the
//     template pruned and customised (overridemanager, the interpreter);
//   - execution: applies a Work's manifests to a push-mode member, and
//     removes them when the Work goes (a pull-mode member's agent runs the
//     same controller on its side, internal/agent);
//   - workstatus: reflects each applied object's status and health into
//     its Work;
//   - bindingstatus: aggregates the Works' status into the binding and
//     the template;
//   - namespace: propagates the control plane's namespaces to the members;
//   - orphans: sweeps the members for copies whose Work is gone.
//
// bindings is the one shape of ResourceBindings and
// ClusterResourceBindings the controllers share; settle paces the status
// controllers' writes. The controllers never
// import one another: they meet through the API server.
package propagation
