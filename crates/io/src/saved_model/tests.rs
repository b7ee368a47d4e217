use tensorcast_proto::trackable_object_graph::trackable_object::ObjectReference;
use tensorcast_proto::Message as _;
use tensorcast_proto::{
    meta_graph_def::MetaInfoDef, AttrValue, FunctionDef, GraphDef, NameAttrList, OpDefProto,
    SavedObject, SavedVariable,
};

use super::*;

/// The error of opening a SavedModel folder that holds only `file` (`bytes`).
fn open_only(file: &str, bytes: &[u8], options: &ReadOptions) -> IoError {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(file), bytes).unwrap();
    SavedModel::open(dir.path(), options).unwrap_err()
}

fn node(name: &str, op: &str) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        ..Default::default()
    }
}

fn func(name: &str, ops: &[&str]) -> FunctionDef {
    FunctionDef {
        signature: Some(OpDefProto {
            name: name.into(),
            ..Default::default()
        }),
        node_def: ops.iter().map(|o| node("n", o)).collect(),
        ..Default::default()
    }
}

fn child(id: i32, name: &str) -> ObjectReference {
    ObjectReference {
        node_id: id,
        local_name: name.into(),
    }
}

fn meta(tags: &[&str]) -> MetaGraphDef {
    MetaGraphDef {
        meta_info_def: Some(MetaInfoDef {
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A SavedModel of one meta graph, held in memory (no folder, no variables).
fn in_memory(m: MetaGraphDef) -> SavedModel {
    SavedModel {
        dir: None,
        proto: tensorcast_proto::SavedModel {
            saved_model_schema_version: 1,
            meta_graphs: vec![m],
        },
        fingerprint: None,
        variables: None,
        warnings: Vec::new(),
    }
}

#[test]
fn open_missing_folder_names_tensorflow_paths() {
    let dir = tempfile::tempdir().unwrap();
    let e = SavedModel::open(dir.path(), &ReadOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e
        .to_string()
        .starts_with("SavedModel file does not exist at: "));
    assert!(e
        .to_string()
        .ends_with("/{saved_model.pbtxt|saved_model.pb}"));
}

#[test]
fn open_pbtxt_reads_the_text_form() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("saved_model.pbtxt"),
        "saved_model_schema_version: 1\nmeta_graphs { meta_info_def { tags: \"serve\" } }\n",
    )
    .unwrap();
    let sm = SavedModel::open(dir.path(), &ReadOptions::default()).unwrap();
    assert_eq!(sm.tag_sets(), vec![vec!["serve".to_string()]]);
}

#[test]
fn open_bad_pbtxt_names_file_line_and_column() {
    let text = b"meta_graphs {\n  bogus: 1 }";
    let e = open_only("saved_model.pbtxt", text, &ReadOptions::default());
    assert_eq!(e.kind(), ErrorKind::Corrupt);
    let text = e.to_string();
    assert!(
        text.contains("saved_model.pbtxt") && text.contains("2:"),
        "{text}"
    );
}

#[test]
fn open_cpb_only_says_not_read_yet() {
    let e = open_only("saved_model.cpb", b"x", &ReadOptions::default());
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("saved_model.cpb"), "{e}");
}

#[test]
fn open_garbage_pb_is_corrupt_naming_file() {
    let e = open_only(
        "saved_model.pb",
        b"\x12\xff\xff\xff\x0f",
        &ReadOptions::default(),
    );
    assert_eq!(e.kind(), ErrorKind::Corrupt);
    assert!(e.to_string().contains("saved_model.pb"), "{e}");
}

#[test]
fn corrupt_optional_fingerprint_warns_and_opens() {
    let dir = tempfile::tempdir().unwrap();
    let pb = tensorcast_proto::SavedModel {
        saved_model_schema_version: 1,
        meta_graphs: vec![meta(&["serve"])],
    };
    std::fs::write(dir.path().join("saved_model.pb"), pb.encode_to_vec()).unwrap();
    let fp = dir.path().join(FINGERPRINT_FILENAME);
    for bad in [&b"\xff\xff\xff garbage"[..], b"\x0a\x80"] {
        std::fs::write(&fp, bad).unwrap();
        let sm = SavedModel::open(dir.path(), &ReadOptions::default()).unwrap();
        assert!(sm.fingerprint().is_none());
        assert_eq!(sm.warnings().len(), 1);
        let w = &sm.warnings()[0];
        assert!(
            w.starts_with(&format!(
                "{}: Fingerprint was found, but there was an error when reading the proto. \
                 Saved model loading will continue. (not a FingerprintDef: ",
                fp.display()
            )),
            "{w}"
        );
        assert_eq!(sm.tag_sets(), vec![vec!["serve".to_string()]]);
    }
    // A sound one: read, no warning.
    std::fs::write(&fp, FingerprintDef::default().encode_to_vec()).unwrap();
    let sm = SavedModel::open(dir.path(), &ReadOptions::default()).unwrap();
    assert!(sm.fingerprint().is_some() && sm.warnings().is_empty());
}

#[test]
fn procfs_symlinked_saved_model_pb_is_read_up_to_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/proc/self/pagemap", dir.path().join("saved_model.pb")).unwrap();
    let opts = ReadOptions {
        max_memory: 1 << 20,
        ..ReadOptions::default()
    };
    let e = SavedModel::open(dir.path(), &opts).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge);
    assert!(
        e.to_string()
            .contains("saved_model.pb: the file reports a size of 0"),
        "{e}"
    );
}

#[test]
fn open_pb_over_memory_limit_is_too_large() {
    let opts = ReadOptions {
        max_memory: 10,
        ..ReadOptions::default()
    };
    let e = open_only("saved_model.pb", &[0u8; 100], &opts);
    assert_eq!(e.kind(), ErrorKind::TooLarge);
}

#[test]
fn variables_cyclic_and_out_of_range_children_get_first_bfs_path() {
    let var = |name: &str| SavedObject {
        kind: Some(saved_object::Kind::Variable(SavedVariable {
            dtype: DataType::DtFloat as i32,
            name: name.into(),
            ..Default::default()
        })),
        ..Default::default()
    };
    let graph = SavedObjectGraph {
        nodes: vec![
            SavedObject {
                children: vec![child(1, "layer"), child(99, "gone"), child(-1, "neg")],
                ..Default::default()
            },
            SavedObject {
                children: vec![child(0, "root"), child(2, "kernel"), child(1, "self")],
                ..Default::default()
            },
            var("dense/kernel"),
            var("orphan"),
        ],
        ..Default::default()
    };
    let mut m = meta(&["serve"]);
    m.object_graph_def = Some(graph);
    let sm = in_memory(m);
    let vars = sm.variables().unwrap();
    assert_eq!(vars.len(), 1);
    assert_eq!(vars[0].path, "layer/kernel");
    assert_eq!(vars[0].key, "layer/kernel/.ATTRIBUTES/VARIABLE_VALUE");
    assert_eq!(vars[0].shape, Some(vec![]));
    assert!(sm.read_variable(&vars[0]).is_err());
}

#[test]
fn ops_follow_reachable_functions_only() {
    let mut call = node("call", "StatefulPartitionedCall");
    call.attr.insert(
        "f".into(),
        AttrValue {
            value: Some(attr_value::Value::Func(Box::new(NameAttrList {
                name: "f1".into(),
                ..Default::default()
            }))),
        },
    );
    let lib = FunctionDefLibrary {
        function: vec![
            func("f1", &["MatMul", "f2"]),
            func("f2", &["AddV2"]),
            func("unused", &["Sin"]),
        ],
    };
    let mut m = meta(&["serve"]);
    m.graph_def = Some(GraphDef {
        node: vec![node("x", "Placeholder"), call],
        library: Some(lib.encode_to_vec().into()),
        ..Default::default()
    });
    let ops = SavedModel::ops(&m).unwrap();
    let ops: Vec<&str> = ops.iter().map(String::as_str).collect();
    assert_eq!(
        ops,
        ["AddV2", "MatMul", "Placeholder", "StatefulPartitionedCall"]
    );
}

#[test]
fn show_all_sorts_tag_sets_and_prints_python_reprs() {
    let sm = SavedModel::from_bytes(
        &tensorcast_proto::SavedModel {
            saved_model_schema_version: 1,
            meta_graphs: vec![meta(&["train"]), meta(&["serve", "gpu"])],
        }
        .encode_to_vec(),
    )
    .unwrap();
    assert_eq!(
        sm.show_all(),
        "\nMetaGraphDef with tag-set: 'serve, gpu' contains the following SignatureDefs:\n\
         The MetaGraph with tag set ['serve', 'gpu'] contains the following ops: set()\n\
         \nMetaGraphDef with tag-set: 'train' contains the following SignatureDefs:\n\
         The MetaGraph with tag set ['train'] contains the following ops: set()\n"
    );
    assert_eq!(python_repr("it's"), "\"it's\"");
    assert_eq!(python_repr("a\\b\n"), "'a\\\\b\\n'");
}

#[test]
fn variables_deep_chain_of_long_names_is_too_large_not_quadratic() {
    // A chain of 3000 objects named by 1 KiB names, every one a variable: listing them would
    // take 3000 * 1.5 MiB on average of paths.
    let name = "n".repeat(1024);
    let n = 3000;
    let nodes: Vec<SavedObject> = (0..n)
        .map(|i| SavedObject {
            children: if i + 1 < n {
                vec![child(i + 1, &name)]
            } else {
                vec![]
            },
            kind: Some(saved_object::Kind::Variable(SavedVariable::default())),
            ..Default::default()
        })
        .collect();
    let mut m = meta(&["serve"]);
    m.object_graph_def = Some(SavedObjectGraph {
        nodes,
        ..Default::default()
    });
    let sm = in_memory(m);
    let e = sm.variables().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge);
    assert!(sm
        .show_all()
        .contains("\nVariables: the object graph's variable paths take more than"));
}
