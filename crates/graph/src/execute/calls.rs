//! Functions of a graph's library run as plans of their own, for the ops that call a function
//! many times or pick one at run time (`While`, `If`, `Case`): each function is compiled once -
//! a graph of one placeholder per argument and one call, lowered (its body inlined, nested
//! calls too) and planned by a session of its own on the caller's variables - and that plan is
//! run per call. (`PartitionedCall` nodes are inlined into the caller's plan instead, see
//! `import/functions.rs`.)
//!
//! A call runs inside its caller's run (`registry/run.rs`): the same cancellation flag and
//! allocation limit, and the chain of calls it is nested in, which refuses a function that
//! re-enters itself more than `MAX_RECURSION` levels deep. Nesting of different functions is
//! not bounded: each call runs on stack grown on demand (`stacker`, which switches to a fresh
//! heap-allocated segment when little of the current one is left), so 500 nested `If`s cost
//! heap, not the thread's stack (TensorFlow runs them too).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tensorcast_core::Tensor;
use tensorcast_proto::attr_value::{ListValue, Value as AttrKindValue};
use tensorcast_proto::{
    AttrValue, FunctionDef, FunctionDefLibrary, GraphDef, Message, NameAttrList, NodeDef,
    VersionDef,
};

use super::{Session, SessionOptions};
use crate::build::graph::Graph;
use crate::error::{Error, Result};
use crate::import::import_graph_def;
use crate::registry::{Functions, Resources, Run};

/// The stack a call needs left to run on the current segment; with less, it runs on a new one.
const STACK_RED_ZONE: usize = 256 << 10;

/// The size of each stack segment a deep chain of calls adds.
const STACK_SEGMENT: usize = 4 << 20;

/// A graph's function library, with the functions compiled so far.
pub(crate) struct FunctionLibrary {
    bytes: Bytes,
    defs: HashMap<String, FunctionDef>,
    compiled: Mutex<HashMap<String, Arc<Compiled>>>,
    resources: Arc<Resources>,
    options: SessionOptions,
}

impl std::fmt::Debug for FunctionLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FunctionLibrary({} functions)", self.defs.len())
    }
}

/// One function, ready to run.
struct Compiled {
    session: Session,
    feeds: Vec<String>,
    fetches: Vec<String>,
}

impl FunctionLibrary {
    /// The library encoded in `bytes`, its functions run on `resources`.
    pub(crate) fn new(
        bytes: Bytes,
        resources: Arc<Resources>,
        options: SessionOptions,
    ) -> Result<FunctionLibrary> {
        let lib = FunctionDefLibrary::decode(bytes.clone()).map_err(|e| {
            Error::Function(format!("the graph's function library does not decode: {e}"))
        })?;
        let defs = lib
            .by_name()
            .map(|(name, f)| (name.to_string(), f.clone()))
            .collect();
        Ok(FunctionLibrary {
            bytes,
            defs,
            compiled: Mutex::default(),
            resources,
            options,
        })
    }

    /// The library's encoded bytes.
    pub(crate) fn bytes(&self) -> &Bytes {
        &self.bytes
    }
}

impl Functions for FunctionLibrary {
    /// Runs function `name` on `args` inside `run`: its outputs in order.
    fn call(&self, name: &str, args: Vec<Tensor>, run: &Run<'_>) -> Result<Vec<Tensor>> {
        run.check_cancelled()?;
        let f = self.compiled_fn(name)?;
        if args.len() != f.feeds.len() {
            return Err(Error::Function(format!(
                "Expects {} arguments, but {} is provided",
                f.feeds.len(),
                args.len()
            )));
        }
        // The function's identity is its compiled form, which the library keeps.
        let frame = run.frame(Arc::as_ptr(&f) as usize, name)?;
        let inner = run.nested(f.session.resources(), &frame);
        let feeds: Vec<(&str, Tensor)> = f.feeds.iter().map(String::as_str).zip(args).collect();
        let fetches: Vec<&str> = f.fetches.iter().map(String::as_str).collect();
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            f.session
                .run_in(&feeds, &fetches, &[], &inner)
                .map(|(out, _)| out)
        })
    }
}

impl FunctionLibrary {
    fn compiled_fn(&self, name: &str) -> Result<Arc<Compiled>> {
        let mut cache = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.get(name) {
            return Ok(c.clone());
        }
        let c = Arc::new(self.compile(name)?);
        cache.insert(name.to_string(), c.clone());
        Ok(c)
    }

    /// A graph calling `name` once on one placeholder per argument, and a session over it.
    fn compile(&self, name: &str) -> Result<Compiled> {
        let f = self.defs.get(name).ok_or_else(|| {
            Error::Function(format!(
                "Failed to find function \"{name}\" in function library"
            ))
        })?;
        let sig = f.signature.clone().unwrap_or_default();
        let types = |args: &[tensorcast_proto::ArgDefProto]| -> Result<Vec<i32>> {
            args.iter()
                .map(|a| {
                    if a.r#type != 0 {
                        Ok(a.r#type)
                    } else {
                        Err(Error::Function(format!(
                            "function '{name}' has argument '{}' whose type is an attr \
                             (polymorphic functions are not supported yet)",
                            a.name
                        )))
                    }
                })
                .collect()
        };
        let tin = types(&sig.input_arg)?;
        let tout = types(&sig.output_arg)?;
        let list = |t: &[i32]| AttrValue {
            value: Some(AttrKindValue::List(Box::new(ListValue {
                r#type: t.to_vec(),
                ..Default::default()
            }))),
        };
        let mut nodes = Vec::with_capacity(tin.len() + 1);
        let mut feeds = Vec::with_capacity(tin.len());
        for (i, &t) in tin.iter().enumerate() {
            let arg = format!("fn_arg{i}");
            feeds.push(format!("{arg}:0"));
            nodes.push(NodeDef {
                name: arg,
                op: "Placeholder".into(),
                attr: [("dtype".to_string(), AttrValue::of_type(t))].into(),
                ..Default::default()
            });
        }
        nodes.push(NodeDef {
            name: "fn_call".into(),
            op: "PartitionedCall".into(),
            input: (0..tin.len()).map(|i| format!("fn_arg{i}")).collect(),
            attr: [
                ("Tin".to_string(), list(&tin)),
                ("Tout".to_string(), list(&tout)),
                (
                    "f".to_string(),
                    AttrValue {
                        value: Some(AttrKindValue::Func(Box::new(NameAttrList {
                            name: name.to_string(),
                            attr: Default::default(),
                        }))),
                    },
                ),
            ]
            .into(),
            ..Default::default()
        });
        let graph = Graph::new();
        import_graph_def(
            &graph,
            &GraphDef {
                node: nodes,
                library: Some(self.bytes.clone()),
                version: 0,
                versions: Some(VersionDef {
                    producer: crate::build::graph::GRAPH_DEF_VERSION,
                    ..Default::default()
                }),
                debug_info: None,
            },
        )?;
        let session = Session::for_function(&graph, self.options, self.resources.clone());
        Ok(Compiled {
            session,
            feeds,
            fetches: (0..tout.len()).map(|k| format!("fn_call:{k}")).collect(),
        })
    }
}
