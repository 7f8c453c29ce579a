//! Communication patterns: which (sender, receiver) pairs talk. Hosts are numbered
//! `0..n_hosts`; every function checks that the hosts exist, are not listed twice and
//! never pair a host with itself, and says what to change otherwise.

use super::WorkloadError;
use crate::rng::SimRng;

/// A (sender, receiver) pair.
pub type Pair = (u32, u32);

fn check_hosts(field: &'static str, hosts: &[u32], n_hosts: u32) -> Result<(), WorkloadError> {
    if hosts.is_empty() {
        return Err(WorkloadError::param(
            field,
            "[]",
            "is empty",
            "list at least one host",
        ));
    }
    if let Some(&h) = hosts.iter().find(|&&h| h >= n_hosts) {
        return Err(WorkloadError::param(
            field,
            h,
            format!("host {h} does not exist (hosts are 0..{n_hosts})"),
            format!("use hosts below {n_hosts}"),
        ));
    }
    let mut sorted = hosts.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(WorkloadError::param(
            field,
            w[0],
            format!("host {} is listed twice", w[0]),
            "list each host once",
        ));
    }
    Ok(())
}

fn check_apart(field: &'static str, host: u32, others: &[u32]) -> Result<(), WorkloadError> {
    if others.contains(&host) {
        return Err(WorkloadError::param(
            field,
            host,
            "is also on the other side: a host would send to itself",
            "remove it from one side",
        ));
    }
    Ok(())
}

/// Every sender sends to `receiver` (`senders.len()`-to-1 incast).
pub fn incast(senders: &[u32], receiver: u32, n_hosts: u32) -> Result<Vec<Pair>, WorkloadError> {
    check_hosts("receiver", &[receiver], n_hosts)?;
    check_hosts("senders", senders, n_hosts)?;
    check_apart("receiver", receiver, senders)?;
    Ok(senders.iter().map(|&s| (s, receiver)).collect())
}

/// `sender` sends to every receiver (1-to-`receivers.len()` outcast).
pub fn outcast(sender: u32, receivers: &[u32], n_hosts: u32) -> Result<Vec<Pair>, WorkloadError> {
    check_hosts("sender", &[sender], n_hosts)?;
    check_hosts("receivers", receivers, n_hosts)?;
    check_apart("sender", sender, receivers)?;
    Ok(receivers.iter().map(|&r| (sender, r)).collect())
}

/// A uniformly random derangement of hosts `0..n_hosts`: host `i` sends to `pairs[i].1`,
/// every host sends to exactly one other and receives from exactly one. Drawn by
/// shuffling (Fisher–Yates) until no host maps to itself: exactly uniform over
/// derangements, about e ≈ 2.7 shuffles on average.
pub fn permutation(n_hosts: u32, rng: &mut SimRng) -> Result<Vec<Pair>, WorkloadError> {
    if n_hosts < 2 {
        return Err(WorkloadError::param(
            "n_hosts",
            n_hosts,
            "a permutation needs at least 2 hosts (each sends to another)",
            "use 2 or more hosts",
        ));
    }
    let mut to: Vec<u32> = (0..n_hosts).collect();
    loop {
        for i in (1..to.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            to.swap(i, j);
        }
        if to.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return Ok(to
                .into_iter()
                .enumerate()
                .map(|(i, d)| (i as u32, d))
                .collect());
        }
    }
}

/// Every host sends to every other host: `n_hosts * (n_hosts - 1)` pairs, by sender then
/// receiver.
pub fn all_to_all(n_hosts: u32) -> Result<Vec<Pair>, WorkloadError> {
    if n_hosts < 2 {
        return Err(WorkloadError::param(
            "n_hosts",
            n_hosts,
            "all-to-all needs at least 2 hosts",
            "use 2 or more hosts",
        ));
    }
    Ok((0..n_hosts)
        .flat_map(|s| (0..n_hosts).filter(move |&d| d != s).map(move |d| (s, d)))
        .collect())
}

/// Every host of `senders` sends to every host of `receivers` (a MapReduce shuffle).
/// The sets may overlap; a host in both does not send to itself (that pair is left out).
pub fn shuffle(
    senders: &[u32],
    receivers: &[u32],
    n_hosts: u32,
) -> Result<Vec<Pair>, WorkloadError> {
    check_hosts("senders", senders, n_hosts)?;
    check_hosts("receivers", receivers, n_hosts)?;
    let pairs: Vec<Pair> = senders
        .iter()
        .flat_map(|&s| {
            receivers
                .iter()
                .filter(move |&&d| d != s)
                .map(move |&d| (s, d))
        })
        .collect();
    if pairs.is_empty() {
        return Err(WorkloadError::param(
            "receivers",
            format!("{receivers:?}"),
            "the only sender is the only receiver: no pair is left",
            "add a receiver other than the sender",
        ));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_derangements() {
        for seed in 0..500 {
            let mut rng = SimRng::stream(seed, "perm");
            let n = 2 + (seed % 40) as u32;
            let pairs = permutation(n, &mut rng).unwrap();
            let mut received = vec![0; n as usize];
            for (i, &(s, d)) in pairs.iter().enumerate() {
                assert_eq!(s, i as u32);
                assert_ne!(s, d, "seed {seed}: host {s} sends to itself");
                received[d as usize] += 1;
            }
            assert!(
                received.iter().all(|&c| c == 1),
                "seed {seed}: {received:?}"
            );
        }
    }

    #[test]
    fn permutations_of_three_hosts_are_uniform() {
        // The derangements of 3 hosts are the two 3-cycles; each should come up half the time.
        let mut rng = SimRng::stream(3, "perm3");
        let n = 20_000;
        let shifted = (0..n)
            .filter(|_| permutation(3, &mut rng).unwrap()[0].1 == 1)
            .count();
        assert!((shifted as f64 / n as f64 - 0.5).abs() < 0.015, "{shifted}");
        assert!(permutation(1, &mut rng).is_err());
    }

    #[test]
    fn incast_outcast_and_their_errors() {
        assert_eq!(incast(&[1, 2], 0, 4).unwrap(), [(1, 0), (2, 0)]);
        assert_eq!(outcast(3, &[0, 1], 4).unwrap(), [(3, 0), (3, 1)]);
        let err = incast(&[1, 2], 9, 4).unwrap_err().to_string();
        assert!(
            err.contains("receiver = 9") && err.contains("hosts are 0..4"),
            "{err}"
        );
        assert!(incast(&[1, 0], 0, 4)
            .unwrap_err()
            .to_string()
            .contains("send to itself"));
        assert!(incast(&[1, 1], 0, 4)
            .unwrap_err()
            .to_string()
            .contains("listed twice"));
        assert!(outcast(0, &[], 4).is_err());
        assert!(outcast(0, &[0, 1], 4).is_err());
    }

    #[test]
    fn all_to_all_and_shuffle() {
        let a = all_to_all(3).unwrap();
        assert_eq!(a, [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]);
        assert!(all_to_all(1).is_err());
        assert_eq!(
            shuffle(&[0, 1], &[1, 2], 3).unwrap(),
            [(0, 1), (0, 2), (1, 2)]
        );
        assert!(shuffle(&[1], &[1], 3).is_err());
        assert!(shuffle(&[0], &[5], 3).is_err());
    }
}
