//! The macro behind the list of host layers in [`super`]: from one line per layer it
//! generates the closed enums ([`super::LayerConfig`], [`super::HostLayers`],
//! [`super::LayerStats`]) and their static dispatch, as `transport/list.rs` does for the
//! transports. Adding a layer never edits this file.

/// `layers! { /// doc \n Variant(module::Marker), ... }`: `Marker` implements
/// [`super::Layer`]; `module` is the layer's name (its summary key).
macro_rules! layers {
    ($( $(#[$doc:meta])* $variant:ident($module:ident :: $marker:ident) ),+ $(,)?) => {
        /// A host layer's settings, as the transport over it declares them.
        #[derive(Clone, Debug, PartialEq)]
        pub enum LayerConfig {
            $( $(#[$doc])* $variant(<$module::$marker as $crate::layer::Layer>::Config), )+
        }

        impl LayerConfig {
            /// Its instance on the host `at` describes.
            pub fn host(&self, at: &$crate::transport::HostSite<'_>) -> Result<HostLayers, $crate::error::BuildError> {
                match self {
                    $( LayerConfig::$variant(c) => <$module::$marker as $crate::layer::Layer>::host(c, at).map(HostLayers::$variant), )+
                }
            }
        }

        /// Every host layer pl2 implements: one variant each, dispatched statically.
        pub enum HostLayers {
            $( $variant(<$module::$marker as $crate::layer::Layer>::Host), )+
        }

        impl HostLayers {
            /// Adds this instance's counters to the run's.
            pub fn report(&self, stats: &mut LayerStats) {
                match self {
                    $( HostLayers::$variant(h) => <$module::$marker as $crate::layer::Layer>::report(h, stats), )+
                }
            }
        }

        impl $crate::layer::HostLayer for HostLayers {
            #[inline]
            fn on_message(&mut self, now: $crate::units::SimTime, msg: &$crate::transport::MsgInfo) {
                match self {
                    $( HostLayers::$variant(l) => l.on_message(now, msg), )+
                }
            }
            #[inline]
            fn on_packet(&mut self, now: $crate::units::SimTime, pkt: &$crate::packet::Packet, out: &mut $crate::layer::LayerOut<'_>) -> $crate::layer::Consumed {
                match self {
                    $( HostLayers::$variant(l) => l.on_packet(now, pkt, out), )+
                }
            }
            #[inline]
            fn on_timer(&mut self, now: $crate::units::SimTime, id: u32, out: &mut $crate::layer::LayerOut<'_>) {
                match self {
                    $( HostLayers::$variant(l) => l.on_timer(now, id, out), )+
                }
            }
            #[inline]
            fn on_tx_done(&mut self, now: $crate::units::SimTime, pkt: &$crate::packet::Packet, out: &mut $crate::layer::LayerOut<'_>) {
                match self {
                    $( HostLayers::$variant(l) => l.on_tx_done(now, pkt, out), )+
                }
            }
            #[inline]
            fn on_actions<P: $crate::transport::Protocol>(&mut self, now: $crate::units::SimTime, src: &mut P, out: &mut $crate::transport::Actions) {
                match self {
                    $( HostLayers::$variant(l) => l.on_actions(now, src, out), )+
                }
            }
        }

        /// Every layer's counters summed over a run, by layer name: `None` when the run
        /// does not use the layer. Serialised (inside the transports' `ModuleStats`) as one
        /// key per used layer, in list order.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct LayerStats {
            $( pub $module: Option<<$module::$marker as $crate::layer::Layer>::Stats>, )+
        }

        impl LayerStats {
            /// Writes one entry per used layer into a summary map.
            pub fn serialize_into<M: serde::ser::SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
                $(
                    if let Some(s) = &self.$module {
                        m.serialize_entry(stringify!($module), s)?;
                    }
                )+
                Ok(())
            }

            /// Every used layer's diagnosis of the run, in list order.
            pub fn diagnose(&self, run: &$crate::metrics::Counters) -> Vec<String> {
                let mut out = Vec::new();
                $(
                    if let Some(s) = &self.$module {
                        out.extend($crate::transport::StatsSection::diagnose(s, run));
                    }
                )+
                out
            }
        }
    };
}

pub(crate) use layers;
