//! Fuzz target body: the text-format GraphDef parser and printer on arbitrary bytes. Parsing
//! must never panic, hang, recurse without bound or allocate beyond what the text justifies;
//! whatever parses must print as text that parses back to the same binary, and a GraphDef's
//! binary printed as text must parse back to it.

use tensorcast_proto::{
    graph_def_binary_to_text, graph_def_text_to_binary, looks_like_graph_def_text, GraphDef,
    Message,
};

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let _ = looks_like_graph_def_text(data);
    let text = String::from_utf8_lossy(data);
    if let Ok(binary) = graph_def_text_to_binary(&text) {
        if GraphDef::decode(binary.as_slice()).is_ok() {
            let printed = graph_def_binary_to_text(&binary).expect("a parsed GraphDef prints");
            let again = graph_def_text_to_binary(&printed).expect("printed text parses");
            assert_eq!(
                again, binary,
                "text -> binary -> text -> binary changed the bytes"
            );
        }
    }
    // The same bytes as a binary GraphDef, printed and parsed back.
    if let Ok(gd) = GraphDef::decode(data) {
        let bytes = gd.encode_to_vec();
        if let Ok(printed) = graph_def_binary_to_text(&bytes) {
            let back = graph_def_text_to_binary(&printed).expect("printed text parses");
            let gd2 = GraphDef::decode(back.as_slice()).expect("parsed text decodes");
            assert_eq!(gd2, gd, "binary -> text -> binary changed the GraphDef");
        }
    }
}
