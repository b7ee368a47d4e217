//! [`Session`]: runs a graph on tensorcast's kernels (`run(feeds, fetches, targets)` with
//! `"op:k"` names, TensorFlow's messages).
//!
//! The executor runs only the nodes the fetches and targets need, in dependency order, and frees
//! each intermediate after its last consumer. With [`SessionOptions::optimize`] on (the default) a
//! `BroadcastTo` whose consumers can read it in place is never materialised: element-wise
//! consumers read the small input through broadcasting, `Cast` and same-size `Bitcast` run on
//! the small input (`Cast(BroadcastTo(x))` = `BroadcastTo(Cast(x))`), chains of `BroadcastTo`
//! and `Identity` collapse, and a `BroadcastTo` to its input's own shape is its input. Results
//! and error messages are the same either way.

mod executor;
pub(crate) mod kernels;

use tensorcast_core::Tensor;

use crate::error::{Error, Result};
use crate::graph::{Endpoint, Graph, Node};
use crate::operation::Output;

/// Options of a [`Session`].
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// Run the optimization pass (lazy `BroadcastTo`); default true.
    pub optimize: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions { optimize: true }
    }
}

/// Runs a graph. Cheap to create; holds a handle to the graph (nodes added later are runnable).
#[derive(Debug, Clone)]
pub struct Session {
    graph: Graph,
    options: SessionOptions,
}

impl Session {
    /// A session over `graph` with default options.
    pub fn new(graph: &Graph) -> Session {
        Session {
            graph: graph.clone(),
            options: SessionOptions::default(),
        }
    }

    /// A session with `options`.
    pub fn with_options(graph: &Graph, options: SessionOptions) -> Session {
        Session {
            graph: graph.clone(),
            options,
        }
    }

    /// Feeds `feeds` (`"x:0"` or `"x"` names), runs what `fetches` and `targets` need, and
    /// returns the fetched tensors in order. A fetch without `:k` means output 0.
    ///
    /// # Errors
    /// TensorFlow's messages: unknown names, a placeholder not fed, a fed dtype or shape that
    /// does not fit, and any kernel's error (with [`Error::node`] naming the node).
    pub fn run(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<Vec<Tensor>> {
        let g = self.graph.read();
        let nodes = g.nodes.clone();
        let by_name = |name: &str| g.by_name.get(name).copied();
        let mut feed_eps = Vec::with_capacity(feeds.len());
        for (name, t) in feeds {
            feed_eps.push((resolve(&nodes, &by_name, name)?, t.clone()));
        }
        let mut fetch_eps = Vec::with_capacity(fetches.len());
        for name in fetches {
            fetch_eps.push(resolve(&nodes, &by_name, name)?);
        }
        let mut target_ids = Vec::with_capacity(targets.len());
        for name in targets {
            let op = name.strip_prefix('^').unwrap_or(name);
            target_ids.push(by_name(op).ok_or_else(|| Error::UnknownOperation(op.to_string()))?);
        }
        drop(g);
        executor::run(&nodes, feed_eps, &fetch_eps, &target_ids, self.options)
    }

    /// [`Session::run`] with [`Output`] handles instead of names.
    ///
    /// # Errors
    /// As [`Session::run`].
    pub fn run_outputs(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
    ) -> Result<Vec<Tensor>> {
        let names: Vec<String> = feeds.iter().map(|(o, _)| o.name()).collect();
        let feed: Vec<(&str, Tensor)> = names
            .iter()
            .zip(feeds)
            .map(|(n, (_, t))| (n.as_str(), t.clone()))
            .collect();
        let fetch_names: Vec<String> = fetches.iter().map(|o| o.name()).collect();
        let fetch: Vec<&str> = fetch_names.iter().map(String::as_str).collect();
        self.run(&feed, &fetch, &[])
    }
}

/// `"op:k"` / `"op"` to an endpoint, with TensorFlow's messages.
fn resolve(
    nodes: &[std::sync::Arc<Node>],
    by_name: &impl Fn(&str) -> Option<usize>,
    name: &str,
) -> Result<Endpoint> {
    let (op, index) = match name.rsplit_once(':') {
        Some((op, k)) => {
            if op.contains(':') {
                return Err(Error::BadTensorName(name.to_string()));
            }
            let k: usize = k
                .parse()
                .map_err(|_| Error::BadTensorName(name.to_string()))?;
            (op, k)
        }
        None => (name, 0),
    };
    let shown = format!("{op}:{index}");
    let Some(id) = by_name(op) else {
        return Err(Error::UnknownTensor {
            name: shown,
            op: op.to_string(),
        });
    };
    let n = &nodes[id];
    if n.registered && index >= n.output_types.len() {
        return Err(Error::NoSuchOutput {
            name: shown,
            op: op.to_string(),
            num_outputs: n.output_types.len(),
        });
    }
    Ok(Endpoint { node: id, index })
}
