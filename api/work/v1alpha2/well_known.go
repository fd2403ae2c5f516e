package v1alpha2

// BindingControllerFinalizer holds a ResourceBinding or
// ClusterResourceBinding until the binding controller has deleted its Works.
// Bindings are created with it, so that adding it costs no second write.
const BindingControllerFinalizer = "karmada.io/binding-controller"
