//! Streams (queues of launches) and events (timestamps recorded in a stream).
//!
//! On the GPU a stream runs its launches in order, asynchronously to the host; an event
//! is recorded when the GPU reaches it, so the time between two events is GPU time. On
//! the emulator every launch runs to completion before `launch_on` returns, so a stream
//! is always idle and an event is the host's wall clock when it was recorded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::gpu::{GpuContext, GpuEvent, GpuStream, RawStream};
use crate::Error;

/// A queue of launches on one device, made by [`crate::Device::stream`].
///
/// ```
/// # fn main() -> Result<(), warpsafe_host::Error> {
/// let device = warpsafe_host::Device::emulator();
/// let stream = device.stream()?;
/// let start = stream.record()?;
/// // ... device.launch_raw_on(&stream, ...) ...
/// let end = stream.record()?;
/// stream.synchronize()?;
/// let elapsed = end.elapsed_since(&start)?;
/// assert!(elapsed.as_secs() < 60);
/// # Ok(())
/// # }
/// ```
pub struct Stream {
    inner: StreamInner,
}

enum StreamInner {
    // Field order is drop order: the stream goes before the context that owns it.
    Gpu { stream: GpuStream, context: Arc<GpuContext> },
    Emulator,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            StreamInner::Gpu { context, .. } => write!(f, "Stream(GPU {})", context.name()),
            StreamInner::Emulator => f.write_str("Stream(emulator)"),
        }
    }
}

impl Stream {
    /// A new non-blocking stream in `context` (it does not wait for the legacy default
    /// stream, so warpsafe's launches overlap with other libraries' work).
    pub(crate) fn gpu(context: &Arc<GpuContext>) -> Result<Stream, Error> {
        let stream = GpuStream::new(context)?;
        Ok(Stream { inner: StreamInner::Gpu { stream, context: Arc::clone(context) } })
    }

    /// The emulator's stream: launches on it complete before they return.
    pub(crate) fn emulator() -> Stream {
        Stream { inner: StreamInner::Emulator }
    }

    /// The raw handle, after checking that the stream belongs to `context`.
    pub(crate) fn gpu_handle(&self, context: &Arc<GpuContext>) -> Result<RawStream, Error> {
        match &self.inner {
            StreamInner::Gpu { stream, context: own } if Arc::ptr_eq(own, context) => Ok(stream.raw()),
            StreamInner::Gpu { .. } => Err(Error::unsupported("a stream of another GPU context")),
            StreamInner::Emulator => Err(Error::unsupported("an emulator stream used with a GPU")),
        }
    }

    /// Whether this stream belongs to `device`: made in its GPU context, or an emulator
    /// stream for an emulated device.
    pub(crate) fn is_on(&self, device: &crate::Device) -> bool {
        match (&self.inner, device.as_gpu()) {
            (StreamInner::Gpu { context, .. }, Some(gpu)) => Arc::ptr_eq(context, gpu.context()),
            (StreamInner::Emulator, None) => true,
            _ => false,
        }
    }

    /// The raw handle of this stream of GPU `device`.
    pub(crate) fn gpu_stream_of(&self, device: &crate::Device) -> Result<RawStream, Error> {
        match device.as_gpu() {
            Some(gpu) => self.gpu_handle(gpu.context()),
            None => Err(Error::unsupported("an emulated device's stream used with a GPU library")),
        }
    }

    /// Whether this is an emulator stream.
    pub(crate) fn is_emulator(&self) -> bool {
        matches!(self.inner, StreamInner::Emulator)
    }

    /// Waits until every launch queued on the stream has finished.
    ///
    /// # Errors
    /// [`Error::Driver`] when waiting fails; on the GPU this is also where a kernel that
    /// was enqueued with `launch_on` and failed while running reports its failure.
    pub fn synchronize(&self) -> Result<(), Error> {
        match &self.inner {
            StreamInner::Gpu { stream, context } => {
                context.make_current()?;
                stream.synchronize().map_err(Error::driver("waiting for a stream"))
            }
            StreamInner::Emulator => Ok(()),
        }
    }

    /// Waits until every launch queued on the stream has finished or `deadline` has
    /// passed: `Ok(true)` when finished, `Ok(false)` at the deadline with work still
    /// queued. For work that may never finish (a collective whose peers never arrive).
    ///
    /// # Errors
    /// As for [`Stream::synchronize`].
    pub(crate) fn wait_until(&self, deadline: Instant) -> Result<bool, Error> {
        let StreamInner::Gpu { stream, context } = &self.inner else {
            return Ok(true);
        };
        context.make_current()?;
        let started = Instant::now();
        loop {
            match stream.is_idle() {
                Ok(true) => return Ok(true),
                Ok(false) if Instant::now() < deadline => pause(started),
                Ok(false) => return Ok(false),
                Err(source) => return Err(Error::Driver { during: "waiting for a stream".into(), source }),
            }
        }
    }

    /// Records an event: on the GPU, a timestamp taken when the stream reaches this point;
    /// on the emulator, the wall clock now.
    ///
    /// # Errors
    /// [`Error::Driver`] when the event cannot be made or recorded.
    pub fn record(&self) -> Result<Event, Error> {
        match &self.inner {
            StreamInner::Gpu { stream, context } => {
                context.make_current()?;
                let event = GpuEvent::record(stream).map_err(Error::driver("recording an event"))?;
                Ok(Event { inner: EventInner::Gpu { event, context: Arc::clone(context) } })
            }
            StreamInner::Emulator => Ok(Event { inner: EventInner::Emulator(Instant::now()) }),
        }
    }
}

/// A point in a [`Stream`], for timing: see [`Stream::record`].
pub struct Event {
    inner: EventInner,
}

enum EventInner {
    // Field order is drop order: the event goes before its context.
    Gpu { event: GpuEvent, context: Arc<GpuContext> },
    Emulator(Instant),
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            EventInner::Gpu { .. } => f.write_str("Event(GPU)"),
            EventInner::Emulator(at) => write!(f, "Event(emulator, {at:?})"),
        }
    }
}

impl Event {
    /// The time from `start` to this event. On the GPU this waits for both events to be
    /// reached and gives GPU time (resolution about half a microsecond); on the emulator it
    /// is the wall-clock time between the two `record` calls.
    ///
    /// # Errors
    /// [`Error::Driver`] when the driver cannot time the events (for example when a kernel
    /// between them failed); [`Error::Unsupported`] for events of different devices.
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration, Error> {
        match (&self.inner, &start.inner) {
            (EventInner::Gpu { event: end, context }, EventInner::Gpu { event: begin, context: other })
                if Arc::ptr_eq(context, other) =>
            {
                context.make_current()?;
                end.elapsed_since(begin)
            }
            (EventInner::Emulator(end), EventInner::Emulator(begin)) => {
                Ok(end.saturating_duration_since(*begin))
            }
            _ => Err(Error::unsupported("timing between events of different devices")),
        }
    }
}

/// Waits a little inside a polling loop that began at `started`: yields the thread for
/// the first 2 ms (a collective usually completes within microseconds, and a sleep would
/// add the timer's ~60 µs slack to every call), then sleeps 100 µs at a time.
pub(crate) fn pause(started: Instant) {
    if started.elapsed() < Duration::from_millis(2) {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(100));
    }
}
