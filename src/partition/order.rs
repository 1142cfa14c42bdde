//! The shared-cell pair ordering of a rank's send block (de la Asunción et al. 2012, section 6.2), on an
//! abstract input: each send cell with the set of ranks it goes to.
//!
//! Goal: every destination's cells one contiguous range of the send block, so that a
//! message is a slice. A cell going to two ranks `a` and `b` must then sit where `a`'s and
//! `b`'s ranges meet. The paper builds the pairs `(a, b)`, chains them into paths of ranks
//! and lays the lists out along each path:
//!
//! ```text
//!   path 0 - 1 - 2:   [only 0] [0 and 1] [only 1] [1 and 2] [only 2]
//! ```
//!
//! All the cells of one pair go to the junction together, so several cells shared by the
//! same pair are no obstacle (the paper's version moved one cell per pair). What cannot be
//! laid out this way: a cell going to three or more chained ranks, a rank paired with three
//! others (a branch), and pairs closing a cycle (no line of intervals can realise a cycle,
//! and real METIS partitions make cycles around a rank enclosed by its neighbours). For
//! those, some destinations are taken out of the chain, the *fallback* set: their cells are
//! placed where they fall and they are sent through a gather list (stored as runs). The
//! fallback set is the smallest one that makes the rest chainable, found exhaustively per
//! group of interacting destinations (they are few), greedily for unusually large groups.

use super::Run;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Groups of interacting destinations larger than this are resolved greedily rather than
/// exhaustively (2^n subsets).
const EXHAUSTIVE_MAX: usize = 14;

/// A rank's send block in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SendOrder {
    /// Cell ids in send-block order.
    pub order: Vec<u32>,
    /// Per destination, ascending: the runs of positions in `order` it receives, in order.
    pub dests: Vec<(u32, Vec<Run>)>,
    /// Destinations taken out of the chain (ascending); not all of them need end up split.
    pub unchained: Vec<u32>,
}

impl SendOrder {
    /// Destinations whose cells are not one contiguous range.
    pub fn fallback_destinations(&self) -> usize {
        self.dests.iter().filter(|(_, runs)| runs.len() != 1).count()
    }
}

/// Order the send block: `cells` are `(id, destinations)`, ids distinct, each with at least
/// one destination. Deterministic: the result depends only on the input as a set, and
/// within each group of interchangeable cells, ids keep ascending order.
pub fn order_send_block(cells: &[(u32, &[u32])]) -> SendOrder {
    // Cells with the same destination set are interchangeable: order classes, not cells.
    let mut classes: BTreeMap<Vec<u32>, Vec<u32>> = BTreeMap::new();
    for &(id, dests) in cells {
        let mut key = dests.to_vec();
        key.sort_unstable();
        key.dedup();
        classes.entry(key).or_default().push(id);
    }
    for ids in classes.values_mut() {
        ids.sort_unstable();
    }
    let mut cells_of: BTreeMap<u32, usize> = BTreeMap::new();
    for (sig, ids) in &classes {
        for &d in sig {
            *cells_of.entry(d).or_default() += ids.len();
        }
    }
    let unchained = choose_unchained(&classes, &cells_of);
    let order = lay_out(&classes, &cells_of, &unchained);

    // Runs per destination, from the final order.
    let sig_of: HashMap<u32, &Vec<u32>> =
        classes.iter().flat_map(|(sig, ids)| ids.iter().map(move |&id| (id, sig))).collect();
    let mut runs: BTreeMap<u32, Vec<Run>> = cells_of.keys().map(|&d| (d, Vec::new())).collect();
    for (pos, id) in order.iter().enumerate() {
        for d in sig_of[id].iter() {
            let r = runs.get_mut(d).expect("every destination has an entry");
            match r.last_mut() {
                Some(last) if (last.start + last.len) as usize == pos => last.len += 1,
                _ => r.push(Run { start: pos as u32, len: 1 }),
            }
        }
    }
    SendOrder { order, dests: runs.into_iter().collect(), unchained: unchained.into_iter().collect() }
}

/// Can the destinations outside `out` be chained? Restricted to them, no class may have
/// three or more destinations, and the pairs must form disjoint simple paths (each
/// destination paired with at most two others, no cycle). Several classes restricted to
/// the same pair are one junction.
fn chainable<'a>(sigs: impl Iterator<Item = &'a [u32]>, out: &dyn Fn(u32) -> bool) -> bool {
    let mut pairs: BTreeSet<(u32, u32)> = BTreeSet::new();
    for sig in sigs {
        let mut kept = sig.iter().copied().filter(|&d| !out(d));
        match (kept.next(), kept.next(), kept.next()) {
            (Some(_), Some(_), Some(_)) => return false,
            (Some(a), Some(b), None) => {
                pairs.insert((a, b));
            }
            _ => {}
        }
    }
    let mut degree: HashMap<u32, u32> = HashMap::new();
    let mut parent: HashMap<u32, u32> = HashMap::new();
    fn find(p: &mut HashMap<u32, u32>, mut x: u32) -> u32 {
        while let Some(&up) = p.get(&x) {
            if up == x {
                break;
            }
            x = up;
        }
        x
    }
    for &(a, b) in &pairs {
        for d in [a, b] {
            let deg = degree.entry(d).or_default();
            *deg += 1;
            if *deg > 2 {
                return false;
            }
            parent.entry(d).or_insert(d);
        }
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra == rb {
            return false;
        }
        parent.insert(ra, rb);
    }
    true
}

/// The destinations to take out of the chain: per group of destinations joined by
/// multi-destination classes, the smallest set (then the fewest cells, then the lowest
/// ranks) that leaves the group chainable.
fn choose_unchained(classes: &BTreeMap<Vec<u32>, Vec<u32>>, cells_of: &BTreeMap<u32, usize>) -> BTreeSet<u32> {
    // Groups: union-find over destinations through classes with two or more of them.
    let mut parent: BTreeMap<u32, u32> = cells_of.keys().map(|&d| (d, d)).collect();
    fn find(p: &BTreeMap<u32, u32>, mut x: u32) -> u32 {
        while p[&x] != x {
            x = p[&x];
        }
        x
    }
    for sig in classes.keys().filter(|s| s.len() >= 2) {
        for w in sig.windows(2) {
            let (a, b) = (find(&parent, w[0]), find(&parent, w[1]));
            if a != b {
                parent.insert(a.max(b), a.min(b));
            }
        }
    }
    let mut groups: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &d in cells_of.keys() {
        groups.entry(find(&parent, d)).or_default().push(d);
    }

    let mut unchained = BTreeSet::new();
    for (root, members) in groups {
        let sigs: Vec<&[u32]> =
            classes.keys().filter(|s| s.len() >= 2 && find(&parent, s[0]) == root).map(|s| s.as_slice()).collect();
        if chainable(sigs.iter().copied(), &|_| false) {
            continue;
        }
        let chosen = if members.len() <= EXHAUSTIVE_MAX {
            smallest_unchained(&members, &sigs, cells_of)
        } else {
            greedy_unchained(&members, &sigs, cells_of)
        };
        unchained.extend(chosen);
    }
    unchained
}

/// Exhaustive: subsets by size, then total cells, then the subset's bits (lowest ranks).
fn smallest_unchained(members: &[u32], sigs: &[&[u32]], cells_of: &BTreeMap<u32, usize>) -> Vec<u32> {
    let n = members.len();
    let pick = |mask: u32| -> Vec<u32> { (0..n).filter(|&i| mask >> i & 1 == 1).map(|i| members[i]).collect() };
    for k in 1..=n as u32 {
        let mut best: Option<(usize, Vec<u32>)> = None;
        for mask in (0u32..1 << n).filter(|m| m.count_ones() == k) {
            let out = pick(mask);
            if chainable(sigs.iter().copied(), &|d| out.binary_search(&d).is_ok()) {
                let candidate = (out.iter().map(|d| cells_of[d]).sum::<usize>(), out);
                if best.as_ref().is_none_or(|b| candidate < *b) {
                    best = Some(candidate);
                }
            }
        }
        if let Some((_, out)) = best {
            return out;
        }
    }
    members.to_vec()
}

/// Greedy, for large groups: repeatedly take out the destination with the most distinct
/// partners (then the fewest cells, then the lowest rank) until the rest is chainable.
fn greedy_unchained(members: &[u32], sigs: &[&[u32]], cells_of: &BTreeMap<u32, usize>) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    while !chainable(sigs.iter().copied(), &|d| out.binary_search(&d).is_ok()) {
        let mut partners: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for sig in sigs {
            let kept: Vec<u32> = sig.iter().copied().filter(|d| out.binary_search(d).is_err()).collect();
            if kept.len() >= 2 {
                for &a in &kept {
                    partners.entry(a).or_default().extend(kept.iter().filter(|&&b| b != a));
                }
            }
        }
        let Some(&worst) = members
            .iter()
            .filter(|d| partners.contains_key(d))
            .max_by_key(|&&d| (partners[&d].len(), std::cmp::Reverse(cells_of[&d]), std::cmp::Reverse(d)))
        else {
            break;
        };
        let at = out.binary_search(&worst).unwrap_err();
        out.insert(at, worst);
    }
    out
}

/// The cell order for a chainable set of destinations (all but `unchained`).
///
/// Chained destinations form paths; each path is laid out as region, junction, region, ...
/// where a destination's region holds the classes whose only chained destination it is
/// and a junction the classes of one pair. Paths go in order of their first destination,
/// each starting from its lower-ranked end. Classes with no chained destination come last.
/// Inside a region, classes that also go to unchained destinations are put towards the
/// path's outer ends, next to each other, so that those destinations get few runs.
fn lay_out(
    classes: &BTreeMap<Vec<u32>, Vec<u32>>,
    cells_of: &BTreeMap<u32, usize>,
    unchained: &BTreeSet<u32>,
) -> Vec<u32> {
    let chained = |d: &u32| !unchained.contains(d);
    let mut region: BTreeMap<u32, Vec<&Vec<u32>>> = BTreeMap::new();
    let mut junction: BTreeMap<(u32, u32), Vec<&Vec<u32>>> = BTreeMap::new();
    let mut rest: Vec<&Vec<u32>> = Vec::new();
    let mut partners: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for sig in classes.keys() {
        let kept: Vec<u32> = sig.iter().copied().filter(chained).collect();
        match kept.as_slice() {
            [] => rest.push(sig),
            &[a] => region.entry(a).or_default().push(sig),
            &[a, b] => {
                junction.entry((a, b)).or_default().push(sig);
                partners.entry(a).or_default().insert(b);
                partners.entry(b).or_default().insert(a);
            }
            _ => unreachable!("chainable() admits at most two chained destinations per class"),
        }
    }

    // Paths: start at each unvisited end (at most one partner), lowest rank first. Every
    // chained destination is on exactly one path since the pairs form no cycle.
    let mut visited: BTreeSet<u32> = BTreeSet::new();
    let mut paths: Vec<Vec<u32>> = Vec::new();
    for &d in cells_of.keys().filter(|d| chained(d)) {
        if visited.contains(&d) || partners.get(&d).is_some_and(|p| p.len() > 1) {
            continue;
        }
        let mut path = vec![d];
        visited.insert(d);
        let mut at = d;
        while let Some(&next) = partners.get(&at).and_then(|p| p.iter().find(|q| !visited.contains(q))) {
            path.push(next);
            visited.insert(next);
            at = next;
        }
        paths.push(path);
    }

    let mut order = Vec::with_capacity(classes.values().map(Vec::len).sum());
    let mut emit = |sigs: &[&Vec<u32>], unchained_first: bool| {
        let goes_out = |s: &&&Vec<u32>| s.iter().any(|d| unchained.contains(d));
        let (out, inner): (Vec<&&Vec<u32>>, Vec<&&Vec<u32>>) = sigs.iter().partition(goes_out);
        let seq: Vec<&&Vec<u32>> = if unchained_first {
            out.into_iter().chain(inner).collect()
        } else {
            inner.into_iter().chain(out).collect()
        };
        for sig in seq {
            order.extend_from_slice(&classes[*sig]);
        }
    };
    for path in &paths {
        for (k, &d) in path.iter().enumerate() {
            // Unchained classes at the path's start go first, elsewhere last.
            emit(region.get(&d).map_or(&[][..], |v| v.as_slice()), k == 0 && path.len() > 1);
            if let Some(&next) = path.get(k + 1) {
                emit(&junction[&(d.min(next), d.max(next))], false);
            }
        }
    }
    emit(&rest, false);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(cells: &[(u32, Vec<u32>)]) -> SendOrder {
        let input: Vec<(u32, &[u32])> = cells.iter().map(|(id, d)| (*id, d.as_slice())).collect();
        order_send_block(&input)
    }

    #[test]
    fn a_cycle_of_three_needs_one_fallback() {
        let s = order(&[(0, vec![1, 2]), (1, vec![2, 3]), (2, vec![1, 3]), (3, vec![1]), (4, vec![2]), (5, vec![3])]);
        assert_eq!(s.unchained.len(), 1);
        assert_eq!(s.fallback_destinations(), 1);
    }

    #[test]
    fn a_branch_needs_one_fallback() {
        // 1 is paired with 2, 3 and 4, which all have cells of their own.
        let s = order(&[(0, vec![1, 2]), (1, vec![1, 3]), (2, vec![1, 4]), (3, vec![2]), (4, vec![3]), (5, vec![4])]);
        assert_eq!(s.unchained, vec![2], "fewest cells, then lowest rank");
        assert_eq!(s.order, vec![4, 1, 0, 2, 5, 3]);
        assert_eq!(s.fallback_destinations(), 1, "{s:?}");
    }
}
