import { formatHlc, type Hlc } from '@metnos/executor-sdk';
import type { Attributes, Span } from '@opentelemetry/api';
import type { AgentEvent, AgentEventCapability, AgentEventType } from './types.ts';

/** The capability of each event type, as seed 002 tables them. */
export const AGENT_EVENT_CAPABILITIES: Readonly<Record<AgentEventType, AgentEventCapability>> = {
  'agent.llm.turn': 'agent:llm',
  'agent.llm.error': 'agent:llm',
  'agent.tool.invoke': 'agent:tool',
  'agent.tool.failed': 'agent:tool',
  'agent.tool.rejected': 'agent:tool',
  'agent.handoff.transition': 'agent:control',
  'agent.handoff.cycle': 'agent:control',
  'agent.budget.exhausted': 'agent:policy',
  'agent.provider.destroy.failed': 'agent',
  'agent.run.aborted': 'agent:control',
  'agent.run.failed': 'agent:control',
};

/** Event data keys that may carry what a model or a tool said: kept in the event, never on a span. */
const NOT_ON_SPANS = new Set(['message']);

/** Where one run's events go: its list, the listeners, and the span they happen under. */
export interface EventSink {
  emit(
    type: AgentEventType,
    fields: { agentId?: string; data?: AgentEvent['data']; detail?: string },
    span?: Span,
  ): AgentEvent;
  readonly events: AgentEvent[];
}

/**
 * Makes the event sink of a run: each event gets an HLC stamp (so events of
 * one run, and of runs in one process, are ordered even when the wall clock
 * steps back), is kept, handed to the listeners, and added to the current
 * OpenTelemetry span as a span event (`metnos.hlc`, `metnos.run_id`,
 * `metnos.agent_id`, the data as `metnos.<key>` — never `detail` or a
 * message). A listener that throws is ignored: tracing never stops a run.
 *
 * @example
 * const sink = createEventSink({ hlc, runId, listeners: [onEvent] });
 * sink.emit('agent.handoff.transition', { data: { from: 'router', to: 'actor' } }, span);
 */
export function createEventSink(settings: {
  hlc: Hlc;
  runId: string;
  listeners: Array<((event: AgentEvent) => void) | undefined>;
}): EventSink {
  const events: AgentEvent[] = [];
  return {
    events,
    emit(type, fields, span) {
      const event: AgentEvent = {
        type,
        capability: AGENT_EVENT_CAPABILITIES[type],
        hlc: settings.hlc.now(),
        runId: settings.runId,
        ...(fields.agentId === undefined ? {} : { agentId: fields.agentId }),
        data: fields.data ?? {},
        ...(fields.detail === undefined ? {} : { detail: fields.detail }),
      };
      events.push(event);
      if (span) {
        const attributes: Attributes = {
          'metnos.hlc': formatHlc(event.hlc),
          'metnos.capability': event.capability,
          'metnos.run_id': event.runId,
        };
        if (event.agentId !== undefined) attributes['metnos.agent_id'] = event.agentId;
        for (const [key, value] of Object.entries(event.data)) {
          if (value !== null && !NOT_ON_SPANS.has(key)) attributes[`metnos.${key}`] = value;
        }
        span.addEvent(type, attributes, event.hlc.ms);
      }
      for (const listener of settings.listeners) {
        try {
          listener?.(event);
        } catch {
          // a listener's failure is its own
        }
      }
      return event;
    },
  };
}
