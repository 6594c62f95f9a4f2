//! Undefined values: where they come from, and where a use of one is reported.
//!
//! The emulator cannot see registers or branches, so it marks undefined values with a
//! *poison* word instead: shared memory starts filled with it, and a shuffle that reads a
//! lane outside its mask returns it. The word is a quiet NaN both as an `f32` and as the
//! upper half of an `f64`, so float arithmetic carries it along (`x + NaN` is that NaN).
//! A *use* is a value containing the word, at a 4-byte-aligned offset, that reaches
//! memory (a shared or global store, an atomic's operand) or a collective that computes
//! from its operands (`redux`, `match`); copies that are dropped, or moved by a shuffle,
//! are not uses. Integer arithmetic on an undefined value does not keep the word, so such
//! a use goes unreported (a later overflow check that fails names the origin, though).
//!
//! A store of the poison bits is reported only when the launch produced an undefined
//! value, so a kernel that legitimately stores those bits in a clean launch is not.

use std::format;
use std::string::String;

use super::poison::{contains_poison, Origin, ORIGINS_KEPT, POISON};
use super::site::{split, Tid};
use super::state::State;
use super::ErrorKind;

impl State {
    /// Thread `t` produced an undefined value, as `what` says.
    pub fn undefined_produced(&mut self, t: Tid, what: String) {
        if self.undefined.origins.len() < ORIGINS_KEPT {
            self.undefined.origins.push(Origin { thread: t, what });
        }
    }

    /// The origin that most likely explains an undefined value in thread `t`: one of `t`'s
    /// own, else of its warp, else of its block, else the launch's first.
    fn origin_for(&self, t: Tid) -> Option<&Origin> {
        let (slot, linear) = split(t);
        let origins = &self.undefined.origins;
        origins
            .iter()
            .find(|o| o.thread == t)
            .or_else(|| {
                origins.iter().find(|o| split(o.thread).0 == slot && split(o.thread).1 / 32 == linear / 32)
            })
            .or_else(|| origins.iter().find(|o| split(o.thread).0 == slot))
            .or_else(|| origins.first())
    }

    /// Thread `t` uses `bytes` as `how` says ("stores it to element 3 of `S` at ..."):
    /// an error when they hold the poison word and the launch produced undefined values.
    pub fn check_defined(
        &self,
        t: Tid,
        bytes: &[u8],
        how: impl FnOnce() -> String,
    ) -> Result<(), (ErrorKind, String)> {
        if self.undefined.origins.is_empty() || !contains_poison(bytes) {
            return Ok(());
        }
        let origin = match self.origin_for(t) {
            Some(o) => format!("it comes from: {}", o.what),
            None => String::from("its origin was not kept"),
        };
        Err((
            ErrorKind::UninitializedValue,
            format!(
                "{} {} an undefined value (the emulator's poison word {POISON:#010x}); {origin}; hint: give every slot a value before it is read (fill the slots no thread writes with the operator's identity), or check a shuffle's lane bound or predicate before using what it read",
                self.who(t),
                how()
            ),
        ))
    }

    /// A note for a thread that panicked: the undefined value it may have used.
    pub fn undefined_note(&self, t: Tid) -> Option<String> {
        let origin = self.origin_for(t)?;
        Some(format!("note: this launch produced an undefined value, which integer arithmetic does not mark (it may be what failed here): {}", origin.what))
    }
}
