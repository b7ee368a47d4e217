//! Interoperability with a real TensorFlow, in one test binary: tensors both ways through the
//! `TensorProto` wire format and the npy/npz/safetensors files (`tf_interop`), and every
//! GraphDef tensorcast writes imported, run and re-exported by TensorFlow (`tf_graph_interop`).
//! Checkpoints both ways (`tf_checkpoint_interop`). The Python peers' interpreter is found by
//! `peer`.

mod peer;
mod tf_checkpoint_interop;
mod tf_graph_interop;
mod tf_interop;
