//! PL2 installs itself: when any transport of the run uses PL2 (PL2 itself, or TCP with
//! `scheduler = "pl2"`), the ToR (switch 0 of a single rack) runs one [`Pl2Switch`]
//! shared by all of them, so they must configure it alike; each tags its scheduled
//! frames in its own layout ([`TagLayout`]). The scheduler's timeslot and ideal-mode lead
//! come from the built network.

use super::config::Pl2Config;
use super::switch::Pl2Switch;
use super::wire::TagLayout;
use crate::config::TopologyConfig;
use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::MAX_TRANSPORTS;
use crate::programs::SwitchProgram;
use crate::transport::{field_of, Installed, NetSite, TransportConfig};
use pl2_protocol::switch::SchedulerConfig;
use pl2_protocol::timeslot::{lead_slots, timeslot_ps};

/// The ToR's scheduler, if any transport of `cfgs` uses PL2.
pub(super) fn install(cfgs: &[TransportConfig], net: &NetSite<'_>) -> Result<Option<Installed>, BuildError> {
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
                let (a, b) = (scheduler_config(c0, net), scheduler_config(&c, net));
                if a != b {
                    return Err(invalid(
                        field,
                        format!("its PL2 switch settings differ from {f0}'s: {}; the ToR runs one scheduler, so give every transport over PL2 the same switch settings", scheduler_differences(&b, &a)),
                    ));
                }
            }
        }
    }
    let Some((c, field)) = first else { return Ok(None) };
    let TopologyConfig::SingleRack { hosts, breakout } = net.net.topology else {
        return Err(invalid(
            field,
            "PL2 runs in a single rack (network.topology kind = \"single_rack\"): its ToR schedules every host port; inter-rack PL2 (§7) is future work",
        ));
    };
    let sw = Pl2Switch::new(scheduler_config(&c, net), hosts, breakout, layouts).map_err(|e| invalid(field, e))?;
    Ok(Some(Installed { switch: 0, program: SwitchProgram::Pl2(Box::new(sw)) }))
}

/// The ToR scheduler's settings for the PL2 configuration `c`.
fn scheduler_config(c: &Pl2Config, net: &NetSite<'_>) -> SchedulerConfig {
    let slot_ps = slot_ps(c, net);
    let lead_ps = match c.ideal_lead {
        Some(d) => d.0,
        None => min_rsv_grt_ps(net),
    };
    c.scheduler(slot_ps, lead_slots(lead_ps, slot_ps))
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
