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

/// One incast of a recurring series: at `time_ps`, every host of `senders` sends to
/// `receiver`.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastEvent {
    pub time_ps: u64,
    pub receiver: u32,
    pub senders: Vec<u32>,
}

/// Incasts at the times of a Poisson process of mean gap `mean_gap_ps`, from `start_ps`
/// until (not including) `stop_ps`: each picks its receiver uniformly from `hosts` and
/// `fan_in` distinct senders uniformly from the other hosts of `hosts` (a partial
/// Fisher–Yates shuffle, so every `fan_in`-subset is equally likely). HPCC's and the SFC
/// slides' recurring incast traffic.
pub fn poisson_incasts(
    hosts: &[u32],
    fan_in: u32,
    mean_gap_ps: f64,
    start_ps: u64,
    stop_ps: u64,
    rng: &mut SimRng,
) -> Result<Vec<IncastEvent>, WorkloadError> {
    check_hosts("hosts", hosts, u32::MAX)?;
    if fan_in < 1 || fan_in as usize >= hosts.len() {
        return Err(WorkloadError::param(
            "fan_in",
            fan_in,
            format!("an incast needs 1..{} senders besides its receiver among {} hosts", hosts.len().saturating_sub(1), hosts.len()),
            "lower fan_in or add hosts",
        ));
    }
    if !(mean_gap_ps.is_finite() && mean_gap_ps > 0.0) {
        return Err(WorkloadError::param("load", mean_gap_ps, "gives no positive gap between incasts", "use a load above 0"));
    }
    let mut out = Vec::new();
    let mut t = start_ps as f64;
    let mut pool: Vec<u32> = Vec::with_capacity(hosts.len());
    loop {
        t += rng.exponential(mean_gap_ps);
        if t >= stop_ps as f64 {
            return Ok(out);
        }
        let receiver = hosts[rng.below(hosts.len() as u64) as usize];
        pool.clear();
        pool.extend(hosts.iter().copied().filter(|&h| h != receiver));
        for i in 0..fan_in as usize {
            let j = i + rng.below((pool.len() - i) as u64) as usize;
            pool.swap(i, j);
        }
        out.push(IncastEvent { time_ps: t as u64, receiver, senders: pool[..fan_in as usize].to_vec() });
    }
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

    /// The gaps average the mean (10,000 incasts: within 3 % — the standard error of the
    /// mean of an exponential is 1 %), no incast repeats a sender or includes its
    /// receiver, and every host is a sender about equally often (fan_in / (n − 1) of
    /// the incasts it does not receive).
    #[test]
    fn poisson_incasts_have_the_mean_gap_and_distinct_senders() {
        let hosts: Vec<u32> = (0..20).collect();
        let mut rng = SimRng::stream(7, "pi");
        let ev = poisson_incasts(&hosts, 5, 1000.0, 0, 10_000_000, &mut rng).unwrap();
        let n = ev.len() as f64;
        assert!((n - 10_000.0).abs() < 300.0, "{n}");
        let mut as_sender = [0u32; 20];
        for e in &ev {
            let mut s = e.senders.clone();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), 5);
            assert!(!s.contains(&e.receiver));
            for &x in &s {
                as_sender[x as usize] += 1;
            }
        }
        let expect = n * 5.0 / 20.0;
        assert!(as_sender.iter().all(|&c| (c as f64 - expect).abs() < 0.1 * expect), "{as_sender:?}");
        assert!(poisson_incasts(&hosts, 20, 1000.0, 0, 1, &mut rng).is_err());
        assert!(poisson_incasts(&hosts, 3, 0.0, 0, 1, &mut rng).is_err());
    }
}
