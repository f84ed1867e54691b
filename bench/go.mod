module github.com/seed31a95821/informer/bench

go 1.26.0

replace github.com/seed31a95821/informer => ../

require (
	github.com/stretchr/testify v1.12.1 // indirect
	k8s.io/api v0.37.2 // indirect
	k8s.io/apimachinery v0.37.2 // indirect
	k8s.io/client-go v0.37.2 // indirect
)
