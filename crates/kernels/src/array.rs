//! Data movement and shape ops (`Transpose`, `ConcatV2`, `Pack`, `Unpack`, `Split`, `StridedSlice`, `GatherV2`, `Pad`, `Tile`, `Range`, `OneHot`, `TopKV2`, ...).
