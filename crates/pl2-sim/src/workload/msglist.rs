//! A user's message list: a CSV file that spells out every message.
//!
//! ```text
//! # comment lines start with '#'; blank lines are ignored
//! time,src,dst,size,thread,priority
//! 0,0,1,1500,0,0
//! 1.5us,2,1,64KiB,1,3
//! ```
//!
//! The first line that is neither blank nor a comment must be exactly that header.
//! `time` is a duration with a unit (`1.5us`, `346ns`, see `units.rs`) or a plain
//! integer meaning picoseconds; `size` is a size with a unit (`1500B`, `64KiB`) or a
//! plain integer meaning bytes. Rows must be sorted by time (ties keep file order),
//! `src != dst`, `size >= 1`, `priority` in 0..=7. Errors give the line, the column and
//! what to write instead.

use super::{MessageSpec, WorkloadError, MAX_PRIORITY};
use crate::units::{Bytes, Duration, SimTime, UnitError};
use std::path::Path;
use std::str::FromStr;

/// The header, in order.
const COLUMNS: [&str; 6] = ["time", "src", "dst", "size", "thread", "priority"];

/// Messages read from a CSV file, in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageList {
    source: String,
    messages: Vec<MessageSpec>,
    /// File line of each message, for later errors.
    lines: Vec<usize>,
}

/// Where a field is, to build errors.
struct At<'a> {
    file: &'a str,
    line: usize,
}

impl At<'_> {
    fn err(&self, column: usize, problem: String, fix: impl Into<String>) -> WorkloadError {
        WorkloadError::Field {
            file: self.file.into(),
            line: self.line,
            column: column + 1,
            column_name: COLUMNS.get(column).copied().unwrap_or("extra"),
            problem,
            fix: fix.into(),
        }
    }

    fn int<T: FromStr>(&self, column: usize, text: &str, range: &str) -> Result<T, WorkloadError> {
        text.parse().map_err(|_| {
            self.err(
                column,
                format!("{text:?} is not an integer in {range}"),
                format!("write an integer in {range}"),
            )
        })
    }
}

/// A plain integer in the base unit, or a quantity with a unit parsed by `units.rs`
/// and turned into the base unit by `base`.
fn quantity<Q: FromStr<Err = UnitError>>(
    text: &str,
    base: impl Fn(Q) -> u64,
) -> Result<u64, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u64>()
            .map_err(|_| format!("{text:?} is too large"));
    }
    text.parse::<Q>().map(base).map_err(|e| e.to_string())
}

fn parse_row(at: &At, fields: &[&str]) -> Result<MessageSpec, WorkloadError> {
    let time = quantity(fields[0], |d: Duration| d.ps()).map_err(|problem| {
        at.err(
            0,
            problem,
            "write a time with its unit (\"1.5us\") or an integer number of picoseconds",
        )
    })?;
    let src: u32 = at.int(1, fields[1], "0..=4294967295")?;
    let dst: u32 = at.int(2, fields[2], "0..=4294967295")?;
    let size = quantity(fields[3], |b: Bytes| b.0).map_err(|problem| {
        at.err(
            3,
            problem,
            "write a size with its unit (\"64KiB\") or an integer number of bytes",
        )
    })?;
    let thread: u16 = at.int(4, fields[4], "0..=65535")?;
    let priority: u8 = at.int(5, fields[5], "0..=7")?;
    if src == dst {
        return Err(at.err(
            2,
            format!("dst {dst} equals src"),
            "a host never sends to itself: pick another dst",
        ));
    }
    if size == 0 {
        return Err(at.err(3, "size is 0".into(), "a message carries at least 1 byte"));
    }
    if priority > MAX_PRIORITY {
        return Err(at.err(
            5,
            format!("priority {priority} is not an 802.1Q priority"),
            "use 0..=7",
        ));
    }
    Ok(MessageSpec {
        time: SimTime(time),
        src,
        dst,
        size,
        thread,
        priority,
    })
}

impl MessageList {
    /// Parses the CSV text; `source_name` (e.g. the path) names it in errors.
    pub fn parse(text: &str, source_name: &str) -> Result<MessageList, WorkloadError> {
        let mut list = MessageList {
            source: source_name.into(),
            messages: vec![],
            lines: vec![],
        };
        let mut header_seen = false;
        for (idx, raw) in text.lines().enumerate() {
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let at = At {
                file: source_name,
                line: idx + 1,
            };
            let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
            if !header_seen {
                header_seen = true;
                if let Some(col) = (0..COLUMNS.len()).find(|&c| fields.get(c) != Some(&COLUMNS[c]))
                {
                    let found = fields.get(col).copied().unwrap_or("");
                    return Err(at.err(
                        col,
                        format!("header has {found:?}, expected {:?}", COLUMNS[col]),
                        format!("start the file with the header `{}`", COLUMNS.join(",")),
                    ));
                }
                if fields.len() > COLUMNS.len() {
                    return Err(at.err(
                        COLUMNS.len(),
                        format!("header has an extra column {:?}", fields[COLUMNS.len()]),
                        format!("the header is exactly `{}`", COLUMNS.join(",")),
                    ));
                }
                continue;
            }
            if fields.len() != COLUMNS.len() {
                let col = fields.len().min(COLUMNS.len());
                return Err(at.err(
                    col,
                    format!(
                        "expected {} comma-separated fields, found {}",
                        COLUMNS.len(),
                        fields.len()
                    ),
                    format!("write `{}`", COLUMNS.join(",")),
                ));
            }
            let msg = parse_row(&at, &fields)?;
            if let (Some(prev), Some(&prev_line)) = (list.messages.last(), list.lines.last()) {
                if msg.time < prev.time {
                    return Err(at.err(
                        0,
                        format!(
                            "time {} is before {} on line {prev_line}",
                            Duration(msg.time.ps()),
                            Duration(prev.time.ps())
                        ),
                        "sort the rows by time",
                    ));
                }
            }
            list.messages.push(msg);
            list.lines.push(at.line);
        }
        if list.messages.is_empty() {
            let problem = if header_seen {
                "has no message rows"
            } else {
                "is empty"
            };
            return Err(WorkloadError::File {
                file: source_name.into(),
                problem: problem.into(),
                fix: format!(
                    "write the header `{}` then one row per message",
                    COLUMNS.join(",")
                ),
            });
        }
        Ok(list)
    }

    /// Reads and parses a message-list file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<MessageList, WorkloadError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError::Io {
            file: name.clone(),
            reason: e.to_string(),
        })?;
        MessageList::parse(&text, &name)
    }

    /// Checks that every `src` and `dst` is one of hosts `0..n_hosts`.
    pub fn validate_hosts(&self, n_hosts: u32) -> Result<(), WorkloadError> {
        for (m, &line) in self.messages.iter().zip(&self.lines) {
            let at = At {
                file: &self.source,
                line,
            };
            for (column, host) in [(1, m.src), (2, m.dst)] {
                if host >= n_hosts {
                    return Err(at.err(
                        column,
                        format!("host {host} does not exist (hosts are 0..{n_hosts})"),
                        format!("use hosts below {n_hosts} or add hosts to the topology"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// File path or name the list came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The messages, in time order.
    pub fn messages(&self) -> &[MessageSpec] {
        &self.messages
    }

    pub fn into_messages(self) -> Vec<MessageSpec> {
        self.messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "time,src,dst,size,thread,priority\n";

    fn err(body: &str) -> String {
        MessageList::parse(&format!("{HEADER}{body}"), "m.csv")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn parses_units_plain_integers_comments_and_blanks() {
        let rows =
            "0,0,1,1500,0,0\n  # indented comment\n1.5us, 2, 1, 64KiB, 1, 3\n1500000,1,0,1KB,0,7\n";
        let text = format!("# a comment\n\n{HEADER}{rows}");
        let list = MessageList::parse(&text, "m.csv").unwrap();
        let m = list.messages();
        assert_eq!(m.len(), 3);
        assert_eq!(
            m[0],
            MessageSpec {
                time: SimTime(0),
                src: 0,
                dst: 1,
                size: 1500,
                thread: 0,
                priority: 0
            }
        );
        assert_eq!(
            m[1],
            MessageSpec {
                time: SimTime(1_500_000),
                src: 2,
                dst: 1,
                size: 65536,
                thread: 1,
                priority: 3
            }
        );
        assert_eq!((m[2].time, m[2].size), (SimTime(1_500_000), 1000));
        assert!(list.validate_hosts(3).is_ok());
        let e = list.validate_hosts(2).unwrap_err().to_string();
        assert!(
            e.contains("m.csv line 6, column 2 (src)") && e.contains("host 2 does not exist"),
            "{e}"
        );
    }

    #[test]
    fn each_error_names_line_and_column() {
        let cases = [
            (
                "1us,0,1,10,0,0\n0,1,0,10,0,0\n",
                "line 3, column 1 (time): time 0ps is before 1us on line 2",
            ),
            ("0,3,3,10,0,0\n", "line 2, column 3 (dst): dst 3 equals src"),
            ("0,0,1,10,0,8\n", "line 2, column 6 (priority): priority 8"),
            ("0,0,1,0,0,0\n", "line 2, column 4 (size): size is 0"),
            ("0,0,1,0B,0,0\n", "column 4 (size): size is 0"),
            ("10,0,1,1.5B,0,0\n", "column 4 (size)"),
            (
                "10q,0,1,10,0,0\n",
                "line 2, column 1 (time): invalid duration",
            ),
            ("-5,0,1,10,0,0\n", "column 1 (time)"),
            ("0,x,1,10,0,0\n", "column 2 (src): \"x\" is not an integer"),
            ("0,0,1,10,70000,0\n", "column 5 (thread)"),
            (
                "0,0,1,10,0\n",
                "line 2, column 6 (priority): expected 6 comma-separated fields, found 5",
            ),
            ("0,0,1,10,0,0,9\n", "line 2, column 7 (extra)"),
        ];
        for (body, want) in cases {
            let e = err(body);
            assert!(
                e.starts_with("m.csv ") && e.contains(want),
                "{body:?}: got {e:?}, want {want:?}"
            );
        }
    }

    #[test]
    fn header_and_empty_file_errors() {
        let e = MessageList::parse("time,src,dest,size,thread,priority\n", "m.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1, column 3 (dst)") && e.contains("\"dest\""),
            "{e}"
        );
        let e = MessageList::parse("time,src,dst,size,thread,priority,x\n", "m.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("column 7"), "{e}");
        assert!(MessageList::parse("# nothing\n", "m.csv")
            .unwrap_err()
            .to_string()
            .contains("is empty"));
        assert!(MessageList::parse(HEADER, "m.csv")
            .unwrap_err()
            .to_string()
            .contains("no message rows"));
        assert!(MessageList::from_file("/nonexistent/m.csv")
            .unwrap_err()
            .to_string()
            .contains("/nonexistent/m.csv"));
    }
}
