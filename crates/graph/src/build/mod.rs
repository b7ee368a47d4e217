//! Building graphs: [`Scope`](crate::Scope), the op classes, [`Operation`](crate::Operation) and
//! [`Output`](crate::Output), [`Input`](crate::Input), and the [`Graph`](crate::Graph) each node is
//! finalised (attrs checked and defaulted) and inferred into.

pub(crate) mod finalize;
pub(crate) mod graph;
pub(crate) mod input;
pub(crate) mod operation;
pub mod ops;
pub(crate) mod scope;
