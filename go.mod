module github.com/vkmps/vkmps

go 1.26.8

require (
	github.com/stretchr/testify v1.12.1
	github.com/vulkan-go/vulkan v0.0.0-20221209234627-c0a353ae26c8
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
