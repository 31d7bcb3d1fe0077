//! `debug`'s output types from `dap-session`'s results: the same shapes, the
//! adapter named by its name.

use super::output::*;

/// A duration in whole ms.
fn ms(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl From<dap_session::Location> for LocationOutput {
    fn from(l: dap_session::Location) -> LocationOutput {
        LocationOutput { file: l.file, line: l.line, column: l.column, function: l.function }
    }
}

impl From<dap_session::Stop> for StopOutput {
    fn from(s: dap_session::Stop) -> StopOutput {
        StopOutput {
            number: s.number,
            reason: s.reason,
            description: s.description,
            text: s.text,
            thread_id: s.thread_id,
            location: s.location.map(Into::into),
        }
    }
}

impl From<dap_session::RunOutcome> for RunOutput {
    fn from(outcome: dap_session::RunOutcome) -> RunOutput {
        match outcome {
            dap_session::RunOutcome::Stopped(stop) => RunOutput::Stopped(stop.into()),
            dap_session::RunOutcome::Exited { exit_code, reason } => RunOutput::Exited { exit_code, reason },
            dap_session::RunOutcome::StillRunning { waited } => RunOutput::StillRunning { waited_ms: ms(waited) },
        }
    }
}

impl From<dap_session::FileBreakpoints> for BreakpointsOutput {
    fn from(b: dap_session::FileBreakpoints) -> BreakpointsOutput {
        let placed = |p: dap_session::PlacedBreakpoint| PlacedOutput {
            requested_line: p.requested_line,
            line: p.line,
            verified: p.verified,
            message: p.message,
        };
        BreakpointsOutput {
            file: b.file,
            lines: b.lines,
            placed: b.placed.map(|p| p.into_iter().map(placed).collect()),
        }
    }
}

impl From<dap_session::ThreadInfo> for ThreadOutput {
    fn from(t: dap_session::ThreadInfo) -> ThreadOutput {
        ThreadOutput { id: t.id, name: t.name }
    }
}

impl From<dap_session::Frame> for FrameOutput {
    fn from(f: dap_session::Frame) -> FrameOutput {
        FrameOutput { id: f.id, location: f.location.into() }
    }
}

impl<T, U: From<T>> From<dap_session::Capped<T>> for CappedOutput<U> {
    fn from(c: dap_session::Capped<T>) -> CappedOutput<U> {
        CappedOutput { items: c.items.into_iter().map(Into::into).collect(), total: c.total }
    }
}

impl From<dap_session::ScopeInfo> for ScopeOutput {
    fn from(s: dap_session::ScopeInfo) -> ScopeOutput {
        ScopeOutput { name: s.name, reference: s.reference, expensive: s.expensive }
    }
}

impl From<dap_session::Value> for ValueOutput {
    fn from(v: dap_session::Value) -> ValueOutput {
        ValueOutput {
            name: v.name,
            value: v.value,
            cut_from: v.cut_from,
            type_name: v.type_name,
            reference: v.reference,
        }
    }
}

impl From<dap_session::Output> for ProgramOutput {
    fn from(o: dap_session::Output) -> ProgramOutput {
        let chunks = o.chunks.into_iter().map(|c| ChunkOutput { stream: c.stream, text: c.text }).collect();
        ProgramOutput { text: o.text, dropped_chars: o.dropped_chars, chunks }
    }
}

impl From<dap_session::Start> for StartOutput {
    fn from(s: dap_session::Start) -> StartOutput {
        match s {
            dap_session::Start::Launch { program, module, args } => StartOutput::Launch { program, module, args },
            dap_session::Start::Attach { host, port, pid } => StartOutput::Attach { host, port, pid },
        }
    }
}

impl From<dap_session::Phase> for PhaseOutput {
    fn from(p: dap_session::Phase) -> PhaseOutput {
        match p {
            dap_session::Phase::Starting => PhaseOutput::Starting,
            dap_session::Phase::Running => PhaseOutput::Running,
            dap_session::Phase::Stopped(stop) => PhaseOutput::Stopped(stop.into()),
            dap_session::Phase::Ended { reason, exit_code } => PhaseOutput::Ended { reason, exit_code },
        }
    }
}

impl From<dap_session::Status> for StatusOutput {
    fn from(s: dap_session::Status) -> StatusOutput {
        let session = s.session.map(|i| SessionOutput {
            adapter: i.adapter.name().to_owned(),
            start: i.start.into(),
            phase: i.phase.into(),
            age_ms: ms(i.age),
            ttl_left_ms: ms(i.ttl_left),
            debuggee_pid: i.debuggee_pid,
            adapter_pid: i.adapter_pid,
        });
        StatusOutput { session, breakpoints: s.breakpoints.into_iter().map(Into::into).collect() }
    }
}

impl From<dap_session::Started> for StartedOutput {
    fn from(s: dap_session::Started) -> StartedOutput {
        StartedOutput {
            adapter: s.adapter.name().to_owned(),
            breakpoints: s.breakpoints.into_iter().map(Into::into).collect(),
            outcome: s.outcome.into(),
        }
    }
}

impl From<dap_session::Terminated> for TerminatedOutput {
    fn from(t: dap_session::Terminated) -> TerminatedOutput {
        TerminatedOutput { adapter: t.adapter.name().to_owned(), debuggee_ended: t.debuggee_ended, was: t.was.into() }
    }
}
