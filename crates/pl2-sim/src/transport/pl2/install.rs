//! PL2 installs itself: when any transport of the run uses PL2 (PL2 itself, or TCP with
//! `scheduler = "pl2"`), every ToR runs one [`Pl2Switch`] shared by all of them, so they
//! must configure it alike; each tags its scheduled frames in its own layout
//! ([`TagLayout`]). The scheduler's timeslot and ideal-mode lead come from the built
//! network.
//!
//! Racks (§7): a single rack's ToR is switch 0; a dumbbell's two switches, a
//! leaf–spine's leaves and a three-tier network's ToRs are racks of consecutive hosts
//! (the topologies' own numbering), each ToR's uplinks one port of their summed rate
//! (dumbbell: the bottleneck; leaf–spine: spines × uplink; three-tier: aggregation
//! switches per pod × ToR uplink). In a custom graph every switch with hosts on it is
//! their ToR, its links to other switches its uplinks. With several racks the external
//! share defaults to §7's 10%. A fat tree is refused (its edge switches' numbering is
//! the graph builder's, not given here).

use super::config::Pl2Config;
use super::switch::{Pl2Switch, Rack};
use super::wire::TagLayout;
use crate::config::{CustomLink, TopologyConfig};
use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::MAX_TRANSPORTS;
use crate::programs::SwitchProgram;
use crate::transport::{field_of, Installed, NetSite, TransportConfig};
use pl2_protocol::switch::SchedulerConfig;
use pl2_protocol::timeslot::{lead_slots, timeslot_ps};

/// The ToR's scheduler, if any transport of `cfgs` uses PL2.
pub(super) fn install(cfgs: &[TransportConfig], net: &NetSite<'_>) -> Result<Vec<Installed>, BuildError> {
    let mut layouts = [TagLayout::Raw; MAX_TRANSPORTS];
    let mut first: Option<(Pl2Config, String)> = None;
    for (t, cfg) in cfgs.iter().enumerate() {
        let (c, layout, field) = match cfg {
            TransportConfig::Pl2(c) => (c.clone(), TagLayout::Raw, field_of(t)),
            TransportConfig::Tcp(tcp) => match tcp.pl2_config() {
                Some(c) => (c, TagLayout::Tcp, format!("{}.scheduler", field_of(t))),
                None => continue,
            },
            _ => continue,
        };
        layouts[t] = layout;
        match &first {
            None => first = Some((c, field)),
            Some((c0, f0)) => {
                let (a, b) = (scheduler_config(c0, net, false), scheduler_config(&c, net, false));
                if a != b {
                    return Err(invalid(
                        field,
                        format!("its PL2 switch settings differ from {f0}'s: {}; the ToR runs one scheduler, so give every transport over PL2 the same switch settings", scheduler_differences(&b, &a)),
                    ));
                }
            }
        }
    }
    let Some((c, field)) = first else { return Ok(Vec::new()) };
    if net.net.host.offload.is_some() {
        // A burst is one hand-over unit sent at the slot its GRT gives (§4.4); the offload
        // would cut it into units of one flow, delay each behind its shaper and send units
        // of different bursts together, so the ToR's schedule would no longer hold.
        return Err(invalid(
            "host.offload",
            format!("segmentation offload cannot be combined with PL2 ({field} runs over PL2): the offload regroups and delays the frames PL2 hands over as timed bursts; remove [network.host.offload] from a run with PL2"),
        ));
    }
    let Some(racks) = racks(net) else {
        return Err(invalid(
            field,
            "PL2 needs to know each rack's ToR: use network.topology kind = \"single_rack\", \"dumbbell\", \"leaf_spine\", \"three_tier\" or \"custom\" (a fat tree's racks are not given)",
        ));
    };
    let cfg = scheduler_config(&c, net, racks.len() > 1);
    racks
        .into_iter()
        .map(|(switch, rack)| {
            let sw = Pl2Switch::new(cfg.clone(), rack, layouts).map_err(|e| invalid(field.clone(), e))?;
            Ok(Installed { switch, program: SwitchProgram::Pl2(Box::new(sw)) })
        })
        .collect()
}

/// Each rack's ToR (switch index) and hosts, by the topology's numbering; `None` where
/// the topology does not say which switch is a host's ToR.
fn racks(net: &NetSite<'_>) -> Option<Vec<(u32, Rack)>> {
    let slot_bps = net.host_uplink.rate.0;
    let many = |n: u32, per: u32, uplink_bps: u64| {
        (0..n).map(|i| (i, Rack { hosts: n * per, local: (i * per..(i + 1) * per).collect(), breakout: 1, uplink_bps: Some(uplink_bps), slot_bps })).collect()
    };
    Some(match &net.net.topology {
        TopologyConfig::SingleRack { hosts, breakout } => {
            vec![(0, Rack { hosts: *hosts, local: (0..*hosts).collect(), breakout: *breakout, uplink_bps: None, slot_bps })]
        }
        TopologyConfig::Custom { hosts, switches, links } => custom_racks(*hosts, *switches, links, net.net.link.rate.0, slot_bps)?,
        TopologyConfig::Dumbbell { hosts_per_side, bottleneck } => many(2, *hosts_per_side, bottleneck.rate.0),
        TopologyConfig::LeafSpine { leaves, spines, hosts_per_leaf, uplink } => many(*leaves, *hosts_per_leaf, u64::from(*spines) * uplink.rate.0),
        TopologyConfig::ThreeTier { pods, tors_per_pod, aggs_per_pod, hosts_per_tor, tor_uplink, .. } => {
            let rate = tor_uplink.as_ref().map_or(net.net.link.rate.0, |l| l.rate.0);
            many(pods * tors_per_pod, *hosts_per_tor, u64::from(*aggs_per_pod) * rate)
        }
        _ => return None,
    })
}

/// A custom graph's racks: each switch with hosts on it, in switch order, with the
/// summed rate of its links to other switches as its uplinks (`None` if it has none).
fn custom_racks(hosts: u32, switches: u32, links: &[CustomLink], default_bps: u64, slot_bps: u64) -> Option<Vec<(u32, Rack)>> {
    let node = |s: &str| -> Option<(bool, u32)> {
        let (kind, i) = s.split_at(1);
        Some((kind == "h", i.parse().ok()?))
    };
    let mut tor = vec![None; hosts as usize];
    let mut up = vec![0u64; switches as usize];
    for l in links {
        let rate = l.rate.map_or(default_bps, |r| r.0);
        match (node(&l.a)?, node(&l.b)?) {
            ((true, h), (false, s)) | ((false, s), (true, h)) => *tor.get_mut(h as usize)? = Some(s),
            ((false, a), (false, b)) => {
                *up.get_mut(a as usize)? += rate;
                *up.get_mut(b as usize)? += rate;
            }
            _ => return None,
        }
    }
    let racks = (0..switches)
        .filter_map(|s| {
            let local: Vec<u32> = (0..hosts).filter(|&h| tor[h as usize] == Some(s)).collect();
            let uplink_bps = Some(up[s as usize]).filter(|&r| r > 0);
            (!local.is_empty()).then_some((s, Rack { hosts, local, breakout: 1, uplink_bps, slot_bps }))
        })
        .collect();
    Some(racks)
}

/// The ToR scheduler's settings for the PL2 configuration `c` (`multi_rack`: the
/// default external share is §7's).
fn scheduler_config(c: &Pl2Config, net: &NetSite<'_>, multi_rack: bool) -> SchedulerConfig {
    let slot_ps = slot_ps(c, net);
    let lead_ps = match c.ideal_lead {
        Some(d) => d.0,
        None => min_rsv_grt_ps(net),
    };
    c.scheduler(slot_ps, lead_slots(lead_ps, slot_ps), multi_rack)
}

/// The PL2 timeslot: an MTU frame (per the configured definition) at a host link's rate.
fn slot_ps(c: &Pl2Config, net: &NetSite<'_>) -> u64 {
    timeslot_ps(net.net.mtu.0, net.host_uplink.rate.0, c.slot_basis())
}

/// The shortest RSV–GRT exchange between host 0 and host 1 under the model's minimum
/// delays: send path, uplink (the switch pipeline starts at the RSV's first bit with
/// cut-through, its last bit otherwise), pipeline, the GRT's serialisation and wire,
/// receive path. Ideal mode's lead L is this, in whole slots: a burst whose chosen slot
/// is at least L ahead can be timed exactly by equation (1).
fn min_rsv_grt_ps(net: &NetSite<'_>) -> u64 {
    let hc = &net.net.host;
    let fec = net.net.link.fec_jitter.min().0;
    let (up, down) = (net.host_uplink, net.host_downlink);
    let sc = &net.switches[0];
    let ctl = net.net.framing.wire_bytes(L4Headers::None, 0);
    let up_ser = if sc.cut_through && down.rate <= up.rate { 0 } else { up.rate.tx_time(ctl).0 };
    hc.send_cpu_per_packet.min().0
        + hc.send_cpu_per_burst.min().0
        + 2 * hc.cpu_per_control.min().0
        + hc.send_latency.min().0
        + up_ser
        + up.delay.0
        + fec
        + sc.latency.min().0
        + down.rate.tx_time(ctl).0
        + down.delay.0
        + fec
        + hc.recv_latency.min().0
        + hc.recv_cpu_per_packet.min().0
}

/// The switch-side PL2 settings in which `a` differs from `b`, by their scenario keys
/// (`a`'s value first).
fn scheduler_differences(a: &SchedulerConfig, b: &SchedulerConfig) -> String {
    let mut d = Vec::new();
    macro_rules! compare {
        ($($key:literal: $f:ident),*) => {$(
            if a.$f != b.$f {
                d.push(format!("{} {:?} vs {:?}", $key, a.$f, b.$f));
            }
        )*};
    }
    compare!(
        "switch_mode": mode,
        "decrement_at": decrement_at,
        "k": k_max_packets,
        "t_unsolicited": t_unsolicited_slots,
        "t": t_sender_slots,
        "improved": improved,
        "suppress_excess_decrements": suppress_excess_decrements,
        "unsolicited_bypass": unsolicited_bypass,
        "priorities": priority,
        "grt_copy_to_receiver": grt_copy_to_receiver,
        "external_share_ppm": external_share_ppm,
        "slot": slot_ps,
        "ledger_bursts_per_host": ledger_bursts_per_host
    );
    d.join(", ")
}
