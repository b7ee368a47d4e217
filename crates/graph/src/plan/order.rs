//! Kahn's algorithm with a stack, the one dependency order import, the rewrite and the session
//! planner share: iterative (a deep graph needs no call stack), deterministic (the first ready
//! node is taken first, then each node's newly ready consumers, last freed first).

/// The order in which nodes become ready: `ready` holds the nodes with nothing to wait for, the
/// next to take last; `pending[i]` is how many inputs node `i` still waits for; `consumers[i]`
/// the nodes that wait for `i` (once per edge). Nodes on a cycle never become ready and are
/// left out.
pub(crate) fn kahn(
    mut ready: Vec<usize>,
    mut pending: Vec<usize>,
    consumers: &[Vec<usize>],
) -> Vec<usize> {
    let mut order = Vec::with_capacity(pending.len());
    while let Some(i) = ready.pop() {
        order.push(i);
        for &c in &consumers[i] {
            pending[c] -= 1;
            if pending[c] == 0 {
                ready.push(c);
            }
        }
    }
    order
}
