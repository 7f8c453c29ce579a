//! Wiring a [`Simulation`] from a [`SimSpec`]: ports in link order, hosts, switches with
//! their shared buffers, routing tables, transports, RNG streams, initial events.

use super::network::{Host, Owner, Port, Switch};
use super::spec::{SimSpec, Source, StreamNext};
use super::trace::Tracer;
use super::{probes, Simulation};
use crate::config::{NetworkConfig, QueueDiscipline};
use super::pfc::{default_headroom, HostPfcRules, HostRx, Pfc, PfcRules};
use super::sfc::{Sfc, SfcRules};
use super::trimming::TrimRules;
use crate::engine::{Ev, EventQueue};
use crate::error::{invalid, BuildError};
use crate::metrics::{Counters, LazyWindow, QueueIntegral, Records};
use crate::net::buffer::SharedBuffer;
use crate::net::nic::NicQueues;
use crate::net::routing::RoutingTable;
use crate::net::topology::Graph;
use crate::packet::{PacketArena, MAX_TRANSPORTS};
use crate::programs::SwitchProgram;
use crate::rng::SimRng;
use crate::transport::{field_of, HostSite, LinkSite, NetSite};
use crate::units::SimTime;
use crate::workload::Apps;
use std::collections::VecDeque;

impl NetworkConfig {
    /// Checks values that serde cannot: ranges and distributions.
    pub fn validate(&self) -> Result<(), BuildError> {
        let dists = [
            ("host.send_latency", &self.host.send_latency),
            ("host.send_cpu_per_message", &self.host.send_cpu_per_message),
            ("host.send_cpu_per_packet", &self.host.send_cpu_per_packet),
            ("host.send_cpu_per_burst", &self.host.send_cpu_per_burst),
            ("host.cpu_per_control", &self.host.cpu_per_control),
            ("host.recv_latency", &self.host.recv_latency),
            ("host.recv_cpu_per_packet", &self.host.recv_cpu_per_packet),
            ("switch.latency", &self.switch.latency),
            ("link.fec_jitter", &self.link.fec_jitter),
        ];
        for (f, d) in dists {
            d.validate().map_err(|e| invalid(f, e.0))?;
        }
        if self.host.threads == 0 {
            return Err(invalid("host.threads", "0; a host needs at least one thread"));
        }
        let a = self.switch.alpha;
        if !(a.is_finite() && a > 0.0) {
            return Err(invalid("switch.alpha", format!("{a}; α must be a positive number (e.g. 1.0); to turn dynamic thresholds off set dynamic_thresholds = false")));
        }
        self.switch.queue.check().map_err(|(f, e)| invalid(format!("switch.queue.{f}"), e))?;
        if let Some(p) = &self.switch.pfc {
            p.check().map_err(|(f, e)| invalid(format!("switch.pfc.{f}"), e))?;
        }
        if let Some(p) = &self.host.pfc {
            p.check().map_err(|(f, e)| invalid(format!("host.pfc.{f}"), e))?;
        }
        if let Some(o) = &self.host.offload {
            o.check().map_err(|(f, e)| invalid(format!("host.offload.{f}"), e))?;
        }
        if let Some(p) = &self.switch.pools {
            p.check().map_err(|(f, e)| invalid(format!("switch.pools.{f}"), e))?;
        }
        if let Some(s) = &self.switch.sfc {
            s.check_with(self.switch.pfc.as_ref()).map_err(|(f, e)| invalid(format!("switch.sfc.{f}"), e))?;
        }
        if self.switch.buffer.0 < 2 * 1542 {
            return Err(invalid("switch.buffer", format!("{}; the buffer must hold at least two full frames", self.switch.buffer)));
        }
        if self.mtu.0 < 64 || self.mtu.0 > 65_000 {
            return Err(invalid("mtu", format!("{}; use 64B..65000B (1500B standard, 9000B jumbo)", self.mtu)));
        }
        if self.framing.link == crate::framing::LinkLayer::Ppp && self.framing.vlan_tag {
            return Err(invalid("framing.vlan_tag", "true, but PPP frames carry no 802.1Q tag; set vlan_tag = false with link = \"ppp\""));
        }
        Ok(())
    }
}

/// PFC's state when some switch runs it (or is an SFC proxy, which sends PAUSE frames
/// through PFC's MAC-control queues): each switch's rules and, per port, the headroom of
/// the link that port's frames come in over (its own link: both directions alike; the
/// link's FEC jitter, at its bound, counts in the delay).
fn build_pfc(cfgs: &[crate::config::SwitchConfig], net: &NetworkConfig, hosts: usize, switch_ports: &[Vec<u32>], ports: &[Port], full_frame_wire: u64) -> Option<Box<Pfc>> {
    if net.host.pfc.is_none() && cfgs.iter().all(|c| c.pfc.is_none() && !c.sfc.as_ref().is_some_and(|s| s.proxy)) {
        return None;
    }
    let (fec_ps, pause_wire) = (net.link.fec_jitter.bound().0, net.framing.mac_control_wire());
    let host_rx = net.host.pfc.as_ref().map(|p| HostRx { rules: HostPfcRules::new(p, full_frame_wire), bytes: vec![[0; 8]; hosts], on_wire: vec![Default::default(); hosts] });
    let rules = cfgs.iter().map(|c| c.pfc.as_ref().map(|p| PfcRules::new(p, full_frame_wire))).collect();
    let mut headroom = vec![0; ports.len()];
    for (c, ps) in cfgs.iter().zip(switch_ports) {
        let Some(p) = &c.pfc else { continue };
        for &port in ps {
            let l = &ports[port as usize];
            headroom[port as usize] = match p.headroom {
                Some(b) => b.0,
                None => default_headroom(l.rate, l.delay.0 + fec_ps, c.latency.bound().0, full_frame_wire, pause_wire, p.response_time.0),
            };
        }
    }
    Some(Box::new(Pfc::new(rules, headroom, host_rx)))
}

/// SFC's state when some switch runs it.
fn build_sfc(cfgs: &[crate::config::SwitchConfig]) -> Option<Box<Sfc>> {
    if cfgs.iter().all(|c| c.sfc.is_none()) {
        return None;
    }
    Some(Box::new(Sfc::new(cfgs.iter().map(|c| c.sfc.as_ref().map(SfcRules::new)).collect())))
}

/// A source's transport index names one of the run's `n` transports.
fn check_transport(t: u8, n: usize, field: &str) -> Result<(), BuildError> {
    if t as usize >= n {
        return Err(invalid(format!("{field}.transport"), format!("{t}, but the run has {n} transport(s) (index 0 is the default)")));
    }
    Ok(())
}

impl Simulation {
    pub fn new(spec: SimSpec) -> Result<Simulation, BuildError> {
        let SimSpec { net, transport, transports: more, seed, sources, persistent, apps, faults, metrics } = spec;
        let mut transport_cfgs = vec![transport];
        transport_cfgs.extend(more);
        if transport_cfgs.len() > MAX_TRANSPORTS {
            return Err(invalid("transports", format!("{} transports; a run mixes at most {MAX_TRANSPORTS} (the default and {} more)", transport_cfgs.len(), MAX_TRANSPORTS - 1)));
        }
        net.validate()?;
        if metrics.window.0 == 0 {
            return Err(invalid("metrics.window", "must be positive, e.g. \"10us\""));
        }
        let mut graph = Graph::build(&net.topology, &net.link)?;
        let switch_cfg = crate::net::overrides::apply(&net.overrides, &net.switch, &mut graph)
            .map_err(|(i, e)| invalid(format!("override[{i}].select"), e.0))?;
        for (i, c) in switch_cfg.iter().enumerate() {
            c.latency.validate().map_err(|e| invalid(format!("switch s{i} latency"), e.0))?;
            if !(c.alpha.is_finite() && c.alpha > 0.0) {
                return Err(invalid(format!("switch s{i} alpha"), "α must be a positive number"));
            }
            c.queue.check().map_err(|(f, e)| invalid(format!("switch s{i} queue.{f}"), e))?;
            if let Some(p) = &c.pfc {
                p.check().map_err(|(f, e)| invalid(format!("switch s{i} pfc.{f}"), e))?;
            }
            if let Some(p) = &c.pools {
                p.check().map_err(|(f, e)| invalid(format!("switch s{i} pools.{f}"), e))?;
            }
            if let Some(s) = &c.sfc {
                s.check_with(c.pfc.as_ref()).map_err(|(f, e)| invalid(format!("switch s{i} sfc.{f}"), e))?;
            }
        }
        let n_hosts = graph.hosts;

        // Ports: link i gives port 2i (a → b) and 2i+1 (b → a).
        let mut ports = Vec::with_capacity(graph.links.len() * 2);
        let mut switch_ports: Vec<Vec<u32>> = vec![Vec::new(); graph.switches as usize];
        let mut host_port = vec![u32::MAX; n_hosts as usize];
        for l in graph.links.iter() {
            for (from, to) in [(l.a, l.b), (l.b, l.a)] {
                let id = ports.len() as u32;
                let owner = if graph.is_host(from) {
                    host_port[from as usize] = id;
                    Owner::Host(from)
                } else {
                    let s = from - n_hosts;
                    let local = switch_ports[s as usize].len() as u32;
                    switch_ports[s as usize].push(id);
                    Owner::Switch { index: s, local }
                };
                ports.push(Port {
                    owner,
                    peer: to,
                    peer_host_index: if graph.is_host(to) { to } else { u32::MAX },
                    // Set below, once the reverse port has its local index.
                    peer_local: u32::MAX,
                    rate: l.rate,
                    delay: l.delay,
                    busy: false,
                    cur_wire: 0,
                    cur_prio: 0,
                    cur_ingress: 0,
                    cur_data: false,
                    queued: 0,
                    pipe: Default::default(),
                    pipe_last: SimTime::ZERO,
                    mac_last: SimTime::ZERO,
                    up: true,
                    loss: 0.0,
                    max_queue: 0,
                    tx_bytes: 0,
                    trims: 0,
                    window: LazyWindow::default(),
                    area: QueueIntegral::default(),
                });
            }
        }
        for i in 0..ports.len() {
            if let Owner::Switch { local, .. } = ports[i ^ 1].owner {
                ports[i].peer_local = local;
            }
        }
        let routes = RoutingTable::build(&graph, super::round_trip::port_of);
        let base_rtt = super::round_trip::round_trip(&net, &graph, &routes, &switch_cfg);

        let hc = &net.host;
        let hosts: Vec<Host> = (0..n_hosts)
            .map(|h| Host {
                port: host_port[h as usize],
                nic: NicQueues::new(hc.threads, hc.arbitration),
                txline: VecDeque::new(),
                txline_last: SimTime::ZERO,
                tx_cpu_free: SimTime::ZERO,
                rx_cpu_free: SimTime::ZERO,
                thread_cpu_free: if hc.cpu == crate::config::CpuScope::Thread { vec![SimTime::ZERO; hc.threads as usize] } else { Vec::new() },
                rng: SimRng::stream(seed, &format!("host{h}")),
                thread_busy: vec![false; hc.threads as usize],
                thread_queue: vec![VecDeque::new(); hc.threads as usize],
                shared_queue: VecDeque::new(),
                timers: vec![Vec::new(); transport_cfgs.len()],
                layer_timers: vec![Vec::new(); transport_cfgs.len()],
                up: true,
                goodput: LazyWindow::default(),
                tx_notify: None,
            })
            .collect();
        let full_frame_wire = net.framing.wire_bytes(crate::framing::L4Headers::None, net.mtu.0);
        let hybrid = super::hybrid::Hybrid::build(&graph, &switch_ports, |p| ports[p as usize].peer, ports.len(), &net)?.map(Box::new);
        let pfc = build_pfc(&switch_cfg, &net, graph.hosts as usize, &switch_ports, &ports, full_frame_wire);
        let sfc = build_sfc(&switch_cfg);
        let switches: Vec<Switch> = switch_ports
            .into_iter()
            .zip(switch_cfg)
            .enumerate()
            .map(|(s, (ps, sc))| Switch {
                node: n_hosts + s as u32,
                buffer: match &sc.pools {
                    None => SharedBuffer::new(sc.buffer.0, sc.dynamic_thresholds.then_some(sc.alpha), sc.port_limit.map(|b| b.0), ps.len()),
                    Some(pools) => SharedBuffer::new(sc.buffer.0, None, None, ps.len()).with_pools(pools),
                }
                .counting_ingress(pfc.as_ref().is_some_and(|f| f.rules[s].is_some())),
                trim: match &sc.queue {
                    QueueDiscipline::StrictPriority => None,
                    QueueDiscipline::Trimming(t) => Some(TrimRules::new(t, full_frame_wire)),
                },
                cfg: sc,
                ports: ps,
                program: Default::default(),
                rng: SimRng::stream(seed, &format!("switch{s}")),
                ecmp_seed: SimRng::stream(seed, &format!("ecmp{s}")).next_u64(),
                path_divisor: routes.path_divisor(s as u32),
                next_hop_turn: 0,
            })
            .collect();

        let host_rate = ports[host_port[0] as usize].rate;
        let mut transports = Vec::with_capacity(transport_cfgs.len() * n_hosts as usize);
        let mut layers = Vec::with_capacity(transport_cfgs.len() * n_hosts as usize);
        for (t, cfg) in transport_cfgs.iter().enumerate() {
            let field = field_of(t);
            for h in 0..n_hosts {
                let link_rate = ports[host_port[h as usize] as usize].rate;
                let site = HostSite { host: h, net: &net, host_rate, link_rate, field: &field, seed, paths: routes.path_count(), base_rtt };
                transports.push(cfg.host(&site)?);
                layers.push(cfg.layer(&site)?.map(|l| l.host(&site)).transpose()?);
            }
        }
        if layers.iter().all(Option::is_none) {
            // No transport runs over a layer: the per-call look-ups stop at the empty list.
            layers = Vec::new();
        }

        for (i, p) in persistent.iter().enumerate() {
            let f = format!("persistent[{i}]");
            if p.host >= n_hosts || p.dst >= n_hosts || p.host == p.dst {
                return Err(invalid(f, format!("host {} → {}: both must be distinct hosts below {n_hosts}", p.host, p.dst)));
            }
            if p.thread >= hc.threads {
                return Err(invalid(f, format!("thread {} but hosts have {} threads (host.threads)", p.thread, hc.threads)));
            }
            if p.size == 0 || p.prio > 7 {
                return Err(invalid(f, "size must be ≥ 1 byte and priority 0..7"));
            }
            check_transport(p.transport, transport_cfgs.len(), &f)?;
            if p.next == StreamNext::Release && !transport_cfgs[p.transport as usize].holds_thread() {
                return Err(invalid(f, "its transport takes every message whole and frees the thread at once, so a closed loop on the thread's release would start messages without end; pace it by delivery (next = StreamNext::Delivery) or give the thread a list of messages instead"));
            }
        }

        // Application workloads: valid parameters, and no thread sends for two of them
        // (or for one of them and a persistent stream).
        let mut taken: std::collections::HashMap<(u32, u16), String> =
            persistent.iter().enumerate().map(|(i, p)| ((p.host, p.thread), format!("persistent[{i}]"))).collect();
        for a in &apps {
            let f = format!("workload[{}]", a.label());
            a.validate(n_hosts, hc.threads).map_err(|e| invalid(&f, e.to_string()))?;
            check_transport(a.transport(), transport_cfgs.len(), &f)?;
            for (h, t) in a.host_threads() {
                if let Some(other) = taken.insert((h, t), f.clone()) {
                    return Err(invalid(f, format!("host {h} thread {t} also sends for {other}; give the workloads different hosts or threads (first_thread)")));
                }
            }
        }
        let (app_state, app_events) = Apps::new(apps, seed);

        let probe_interval = metrics.probe_interval.0;
        let link_fec = net.link.fec_jitter.clone();
        let port_rng = (0..ports.len()).map(|p| SimRng::stream(seed, &format!("port{p}"))).collect();
        let send_path_free = [&hc.send_latency, &hc.send_cpu_per_message, &hc.send_cpu_per_packet, &hc.send_cpu_per_burst, &hc.cpu_per_control].iter().all(|d| d.is_zero())
            && hc.offload.is_none();
        let mut sim = Simulation {
            now: SimTime::ZERO,
            events: EventQueue::default(),
            net,
            graph,
            queues: (0..ports.len()).map(|_| Default::default()).collect(),
            ports,
            hosts,
            switches,
            routes,
            transports,
            layers,
            path_modes: std::array::from_fn(|t| transport_cfgs.get(t).and_then(|c| c.paths())),
            transport_cfgs,
            arena: PacketArena::default(),
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            frame_counts: Vec::new(),
            live_msgs: 0,
            next_msg_id: 0,
            sources_active: sources.len() as u32,
            sources,
            persistent,
            apps: app_state,
            faults,
            metrics,
            counters: Counters::default(),
            records: Records::default(),
            actions: vec![Box::default()],
            released: Vec::new(),
            group: Vec::new(),
            emit: Vec::new(),
            program_probes: Vec::new(),
            probe_grid: probes::ProbeGrid::new(probe_interval),
            ideal_cache: Default::default(),
            link_fec,
            tracer: None,
            drop_rules: false,
            send_path_free,
            breakdown: None,
            critical: None,
            timers: Vec::new(),
            port_rng,
            pfc,
            sfc,
            hybrid,
        };
        sim.install_programs()?;
        sim.validate_sources()?;
        if sim.metrics.breakdown {
            sim.breakdown = Some(Vec::new());
        }
        if let Some(t) = sim.metrics.trace.clone() {
            let nodes = t
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| sim.node_of(n, &format!("metrics.trace.nodes[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            sim.tracer = Some(Box::new(Tracer { cfg: t, nodes, written: 0 }));
        }
        sim.install_faults()?;
        sim.start_circuits();
        for i in 0..sim.sources.len() {
            sim.schedule_next_arrival(i as u32);
        }
        for i in 0..sim.persistent.len() {
            let at = sim.persistent[i].start;
            sim.events.push(at, Ev::Stream(i as u32));
        }
        for (at, i) in app_events {
            sim.events.push(at, Ev::App(i));
        }
        Ok(sim)
    }

    /// The switch programs the run's transports install (one program per switch).
    fn install_programs(&mut self) -> Result<(), BuildError> {
        let link = |p: u32| LinkSite { rate: self.ports[p as usize].rate, delay: self.ports[p as usize].delay };
        let up = self.hosts[0].port;
        let switches: Vec<_> = self.switches.iter().map(|s| s.cfg.clone()).collect();
        let site = NetSite { net: &self.net, host_uplink: link(up), host_downlink: link(up ^ 1), switches: &switches };
        for inst in crate::transport::install(&self.transport_cfgs, &site)? {
            let sw = &mut self.switches[inst.switch as usize];
            if !matches!(sw.program, SwitchProgram::Forward) {
                return Err(invalid("transports", format!("two programs for switch s{}; a switch runs one program", inst.switch)));
            }
            sw.program = inst.program;
        }
        Ok(())
    }

    fn validate_sources(&self) -> Result<(), BuildError> {
        let n = self.graph.hosts;
        let threads = self.net.host.threads;
        for (i, s) in self.sources.iter().enumerate() {
            check_transport(s.transport(), self.transport_cfgs.len(), &format!("sources[{i}]"))?;
            if let Source::List { msgs, .. } = s {
                for (j, m) in msgs.iter().enumerate() {
                    let f = format!("sources[{i}].messages[{j}]");
                    if m.src >= n || m.dst >= n || m.src == m.dst {
                        return Err(invalid(f, format!("{} → {}: hosts must be distinct and below {n}", m.src, m.dst)));
                    }
                    if m.thread != u16::MAX && m.thread >= threads {
                        return Err(invalid(f, format!("thread {} but hosts have {threads} threads (host.threads)", m.thread)));
                    }
                    if m.size == 0 || m.priority > 7 {
                        return Err(invalid(f, "size must be ≥ 1 byte and priority 0..7"));
                    }
                }
            }
        }
        Ok(())
    }
}
