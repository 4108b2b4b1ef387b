//! The mode and flush selects' choices: their option values, labels and the specs they stand for.

use shared::Mode;

/// The mode select's choice (`#mode` option values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModeChoice {
    Sequential,
    #[default]
    Pipelined,
    Multiplexed,
    Transaction,
    Mset,
    Connections,
}

impl ModeChoice {
    pub const ALL: [ModeChoice; 6] = [
        ModeChoice::Sequential,
        ModeChoice::Pipelined,
        ModeChoice::Multiplexed,
        ModeChoice::Transaction,
        ModeChoice::Mset,
        ModeChoice::Connections,
    ];

    /// The mode's `kind` name (`Mode::KINDS`, listed in the same order).
    pub fn value(self) -> &'static str {
        Mode::KINDS[self as usize]
    }

    /// What the select shows.
    pub fn label(self) -> &'static str {
        match self {
            ModeChoice::Sequential => "sequential",
            ModeChoice::Pipelined => "pipelined",
            ModeChoice::Multiplexed => "multiplexed",
            ModeChoice::Transaction => "MULTI/EXEC",
            ModeChoice::Mset => "MSET / MGET",
            ModeChoice::Connections => "connections (a pool)",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.value() == value)
    }

    pub fn from_value(value: &str) -> Self {
        Self::parse(value).unwrap_or_default()
    }

    /// The batch field's name in this mode (`None`: the field does not apply).
    pub fn batch_name(self) -> Option<&'static str> {
        match self {
            ModeChoice::Sequential => None,
            ModeChoice::Multiplexed => Some("in flight"),
            ModeChoice::Connections => Some("connections"),
            _ => Some("batch"),
        }
    }
}

/// How a pipeline is written (`#flush` option values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlushChoice {
    #[default]
    Batch,
    EachCommand,
    Buffered,
}

impl FlushChoice {
    pub const ALL: [FlushChoice; 3] = [
        FlushChoice::Batch,
        FlushChoice::EachCommand,
        FlushChoice::Buffered,
    ];

    pub fn value(self) -> &'static str {
        match self {
            FlushChoice::Batch => "batch",
            FlushChoice::EachCommand => "each",
            FlushChoice::Buffered => "buffered",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            FlushChoice::Batch => "one write per batch",
            FlushChoice::EachCommand => "flush each command",
            FlushChoice::Buffered => "buffered, every n",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.value() == value)
    }
}
