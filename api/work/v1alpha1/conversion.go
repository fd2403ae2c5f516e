package v1alpha1

// Hub marks v1alpha1 as the version controller-runtime's conversion webhook
// converts through. v1alpha2 (the stored version) holds the conversion
// functions, because it imports this package and not the reverse; with two
// versions the choice of hub changes nothing else.
func (*ResourceBinding) Hub() {}

// Hub marks v1alpha1 as the version conversion goes through.
func (*ClusterResourceBinding) Hub() {}
