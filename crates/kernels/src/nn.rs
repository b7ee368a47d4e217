//! Convolution, pooling and normalisation, NHWC: `Conv2D`, `DepthwiseConv2dNative`, `MaxPool`, `AvgPool`, `BiasAdd`, `FusedBatchNormV3`.
