//! Immediate dominators of a graph given by its successor lists, by the iterative algorithm of
//! Cooper, Harvey and Kennedy over a reverse postorder: the post-dominators that place
//! reconvergence points ([`super::reconverge`], on the reversed graph) and the dominators the
//! lowering's peepholes reason with. It sees node numbers and edges only.

/// For every node, its immediate dominator on the paths from `root` (`root`'s is `root`), or
/// None for nodes that `root` does not reach. Successors out of range are ignored.
pub fn immediate(successors: &[Vec<usize>], root: usize) -> Vec<Option<usize>> {
    let n = successors.len();
    let edges = |node: usize| successors[node].iter().copied().filter(move |&s| s < n);
    // Postorder from the root, without recursion.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some(&mut (node, ref mut next)) = stack.last_mut() {
        if let Some(child) = edges(node).nth(*next) {
            *next += 1;
            if !std::mem::replace(&mut seen[child], true) {
                stack.push((child, 0));
            }
        } else {
            order.push(node);
            stack.pop();
        }
    }
    let mut rank = vec![usize::MAX; n];
    for (i, &node) in order.iter().enumerate() {
        rank[node] = i;
    }
    let mut predecessors = vec![Vec::new(); n];
    for node in 0..n {
        for s in edges(node) {
            predecessors[s].push(node);
        }
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[root] = Some(root);
    let mut changed = true;
    while changed {
        changed = false;
        for &node in order.iter().rev().filter(|&&node| node != root) {
            let mut new = None;
            for &p in predecessors[node].iter().filter(|&&p| idom[p].is_some()) {
                new = Some(new.map_or(p, |q| intersect(&idom, &rank, p, q)));
            }
            if new.is_some() && idom[node] != new {
                idom[node] = new;
                changed = true;
            }
        }
    }
    idom
}

/// The nearest common dominator of `a` and `b`: walk up from whichever is earlier in postorder.
fn intersect(idom: &[Option<usize>], rank: &[usize], mut a: usize, mut b: usize) -> usize {
    let up = |x: usize| idom[x].expect("processed before");
    while a != b {
        while rank[a] < rank[b] {
            a = up(a);
        }
        while rank[b] < rank[a] {
            b = up(b);
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::immediate;

    #[test]
    fn a_diamond_and_a_loop_have_the_dominators_of_their_shape() {
        // 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 4, 1 (a back edge); 5 unreachable.
        let g = vec![vec![1, 2], vec![3], vec![3], vec![4, 1], vec![], vec![0]];
        assert_eq!(immediate(&g, 0), [Some(0), Some(0), Some(0), Some(0), Some(3), None]);
    }
}
