//! The macro behind the list of transports in [`super`]: from one line per module it
//! generates the closed enums ([`super::TransportConfig`], [`super::HostTransport`],
//! [`super::ModuleStats`]) and their static dispatch, as smoltcp does for its sockets.
//! Adding a transport never edits this file.

/// `transports! { /// doc \n Variant(module::Marker), ... }`: `Marker` implements
/// [`super::Transport`]; `Variant` is the scenario's `kind` in snake case and `module`
/// the module's name (its summary key).
macro_rules! transports {
    ($( $(#[$doc:meta])* $variant:ident($module:ident :: $marker:ident) ),+ $(,)?) => {
        /// A transport, selected by `kind`: the scenario's default `[transport]` or one of its
        /// named `[transports.NAME]`.
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
        pub enum TransportConfig {
            $( $(#[$doc])* $variant(<$module::$marker as $crate::transport::Transport>::Config), )+
        }

        impl TransportConfig {
            /// Headers between Ethernet and the payload of data frames.
            pub fn l4(&self) -> $crate::framing::L4Headers {
                match self {
                    $( TransportConfig::$variant(c) => <$module::$marker as $crate::transport::Transport>::l4(c), )+
                }
            }

            /// How its frames spread over equal-cost paths (`None`: the switches' setting).
            pub fn holds_thread(&self) -> bool {
                match self {
                    $( TransportConfig::$variant(c) => <$module::$marker as $crate::transport::Transport>::holds_thread(c), )+
                }
            }

            pub fn paths(&self) -> Option<$crate::config::EcmpMode> {
                match self {
                    $( TransportConfig::$variant(c) => <$module::$marker as $crate::transport::Transport>::paths(c), )+
                }
            }

            /// The host layer it runs over on the host `at` describes, if any.
            pub fn layer(&self, at: &$crate::transport::HostSite<'_>) -> Result<Option<$crate::layer::LayerConfig>, $crate::error::BuildError> {
                match self {
                    $( TransportConfig::$variant(c) => <$module::$marker as $crate::transport::Transport>::layer(c, at), )+
                }
            }

            /// Its instance on the host `at` describes.
            pub fn host(&self, at: &$crate::transport::HostSite<'_>) -> Result<HostTransport, $crate::error::BuildError> {
                match self {
                    $( TransportConfig::$variant(c) => <$module::$marker as $crate::transport::Transport>::host(c, at).map(HostTransport::$variant), )+
                }
            }
        }

        /// The switch programs the run's transports install, in list order.
        pub fn install(cfgs: &[TransportConfig], net: &$crate::transport::NetSite<'_>) -> Result<Vec<$crate::transport::Installed>, $crate::error::BuildError> {
            let mut all = Vec::new();
            $( all.extend(<$module::$marker as $crate::transport::Transport>::install(cfgs, net)?); )+
            Ok(all)
        }

        /// All protocols pl2 implements: one variant each, dispatched statically.
        pub enum HostTransport {
            $( $variant(<$module::$marker as $crate::transport::Transport>::Host), )+
        }

        impl HostTransport {
            /// Adds this instance's counters to the run's.
            pub fn report(&self, stats: &mut ModuleStats) {
                match self {
                    $( HostTransport::$variant(h) => <$module::$marker as $crate::transport::Transport>::report(h, stats), )+
                }
            }
        }

        impl $crate::transport::Protocol for HostTransport {
            #[inline]
            fn on_message(&mut self, now: $crate::units::SimTime, msg: &$crate::transport::MsgInfo, out: &mut $crate::transport::Actions) {
                match self {
                    $( HostTransport::$variant(t) => t.on_message(now, msg, out), )+
                }
            }
            // Out of line: inlined, every protocol's packet handler joined the event loop's
            // code (70 KB of it), and the one a run uses was spread among the others'.
            #[inline(never)]
            fn on_packet(&mut self, now: $crate::units::SimTime, pkt: &$crate::packet::Packet, view: &$crate::transport::HostView, out: &mut $crate::transport::Actions) {
                match self {
                    $( HostTransport::$variant(t) => t.on_packet(now, pkt, view, out), )+
                }
            }
            #[inline]
            fn on_tx_done(&mut self, now: $crate::units::SimTime, pkt: &$crate::packet::Packet, out: &mut $crate::transport::Actions) {
                match self {
                    $( HostTransport::$variant(t) => t.on_tx_done(now, pkt, out), )+
                }
            }
            #[inline]
            fn on_timer(&mut self, now: $crate::units::SimTime, id: u32, out: &mut $crate::transport::Actions) {
                match self {
                    $( HostTransport::$variant(t) => t.on_timer(now, id, out), )+
                }
            }
            #[inline]
            fn on_tx_dequeue(&mut self, now: $crate::units::SimTime, thread: u16, out: &mut $crate::transport::Actions) {
                match self {
                    $( HostTransport::$variant(t) => t.on_tx_dequeue(now, thread, out), )+
                }
            }
            fn frames_if_never_resent(&self, size: u64) -> Option<u32> {
                match self {
                    $( HostTransport::$variant(t) => t.frames_if_never_resent(size), )+
                }
            }
            #[inline]
            fn sendable(&self, flow: (u32, u16), rate: $crate::units::BitsPerSec) -> Option<$crate::units::SimTime> {
                match self {
                    $( HostTransport::$variant(t) => t.sendable(flow, rate), )+
                }
            }
            #[inline]
            fn pull(&mut self, now: $crate::units::SimTime, flow: (u32, u16), out: &mut $crate::transport::Actions) -> Option<$crate::transport::Pulled> {
                match self {
                    $( HostTransport::$variant(t) => t.pull(now, flow, out), )+
                }
            }
        }

        /// Every module's counters summed over a run, by module name: `None` when the run
        /// does not use the module. Serialised as one key per module that reports counters
        /// (`null` for `None`), in list order.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct ModuleStats {
            $( pub $module: Option<<$module::$marker as $crate::transport::Transport>::Stats>, )+
            /// The host layers' counters (serialised after the transports', one key per
            /// used layer).
            pub layers: $crate::layer::LayerStats,
        }

        impl ModuleStats {
            /// Every used module's diagnosis of the run (`StatsSection::diagnose`), in list
            /// order.
            pub fn diagnose(&self, run: &$crate::metrics::Counters) -> Vec<String> {
                let mut out = Vec::new();
                $(
                    if let Some(s) = &self.$module {
                        out.extend($crate::transport::StatsSection::diagnose(s, run));
                    }
                )+
                out.extend(self.layers.diagnose(run));
                out
            }
        }

        impl serde::Serialize for ModuleStats {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(None)?;
                $(
                    if <<$module::$marker as $crate::transport::Transport>::Stats as $crate::transport::StatsSection>::IN_SUMMARY {
                        m.serialize_entry(stringify!($module), &self.$module)?;
                    }
                )+
                self.layers.serialize_into(&mut m)?;
                m.end()
            }
        }
    };
}

pub(crate) use transports;
