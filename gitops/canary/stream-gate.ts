import type { ConfigAdmission, ConfigGate, ConfigStep } from '../../runtime/cluster/port.js';
import { admit, OPEN_GATE, type GateEnv, type GateState, type GateStep } from './gate.js';
import { runGateStep, type GateStepDeps } from './apply.js';
import { canaryOf, decisionKey, streamItemOf, type StreamItem } from './msg.js';

/** The config consumer's step of one gate step: what it records, its log line, and how it runs. */
function configStep(deps: GateStepDeps, step: GateStep): ConfigStep {
  const run = () => runGateStep(deps, step);
  const { seq } = step;
  switch (step.op) {
    case 'decide': {
      const d = step.decision;
      return { seq, revision: decisionKey(d), run, note: { level: 'info', fields: { seq, revision: d.revision, verdict: d.verdict, reason: d.reason }, message: 'canary decision recorded' } };
    }
    case 'hold': {
      const revision = step.msg.plan.revision;
      return {
        seq, revision, msg: step.msg, holds: true, run,
        note: { level: 'info', fields: { seq, revision, nodes: canaryOf(step.msg)?.nodes }, message: 'canary plan held until its decision; later config messages wait behind it' },
      };
    }
    case 'canary':
      return { seq, revision: step.msg.plan.revision, msg: step.msg, run, note: { level: 'info', fields: { seq, revision: step.msg.plan.revision }, message: 'canary plan applied on this canary node' } };
    case 'skip':
      return { seq, revision: step.msg.plan.revision, msg: step.msg, run, note: { level: 'warn', fields: { seq, revision: step.msg.plan.revision }, message: 'aborted canary plan skipped' } };
    case 'apply':
      return { seq, revision: step.msg.plan.revision, msg: step.msg, run };
  }
}

/** One consumer's admission: the gate's state (what it holds) between messages. */
class CanaryAdmission implements ConfigAdmission<StreamItem> {
  private state: GateState = OPEN_GATE;

  constructor(private readonly deps: GateStepDeps, private readonly env: GateEnv) {}

  admit(item: StreamItem): ConfigStep[] {
    const out = admit(this.state, item, this.env);
    this.state = out.state;
    return out.steps.map((s) => configStep(this.deps, s));
  }

  holding(): { revision: string; seq: number; messages: number } | undefined {
    const h = this.state.holding;
    return h ? { revision: h.revision, seq: h.seq, messages: h.items.length } : undefined;
  }
}

/**
 * The canary gate of the config consumer (docs/cluster.md "Canary plans in the stream"): plans and
 * canary decisions are parsed (`streamItemOf`), admitted in stream order (gate.ts: applied, held
 * behind a canary plan, or released by its decision) and run (apply.ts).
 */
export function canaryStreamGate(deps: GateStepDeps & { self: string }): ConfigGate<StreamItem> {
  const env: GateEnv = {
    self: deps.self,
    decided: (revision) => {
      const phase = deps.store.get(revision)?.phase;
      return phase === 'promoted' ? 'promote' : phase === 'aborted' ? 'abort' : undefined;
    },
  };
  return { parse: streamItemOf, open: () => new CanaryAdmission(deps, env) };
}
