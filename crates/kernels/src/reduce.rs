//! Reductions with `keep_dims` and negative axes: `Sum`, `Mean`, `Max`, `Min`, `Prod`, `All`, `Any`, `ArgMax`, `ArgMin`.
