/**
 * `agent`: a SWE-agent+ style loop (SWT-bench §4.4, App. E Fig. 14). The model explores the
 * repository in a sandbox session, writes a test, runs it and submits; a submitted test is
 * verified and, when rejected, the reason goes back to the model (up to `maxSubmits`). When the
 * budget runs out the loop stops and whatever test files the session holds are verified.
 */
import { secretValues } from '../../util/secrets.js';
import { isBudgetExhausted, type BudgetDimension } from '../budget.js';
import { evaluateCandidate, isLlmFailure, testPartOf, toReproduction, type CandidateResult, type StrategyContext } from '../candidate.js';
import { AGENT_TOOLS, executeTool } from '../agentTools.js';
import { History } from '../history.js';
import { FLIP_HINT, passedOnBase, withFeedback } from '../feedback.js';
import { extractPatchText } from './zeroShotPlus.js';
import type { ChatResponse, ToolCall } from '../llmTypes.js';
import { AGENT_SYSTEM_PROMPT, agentInstructions } from '../prompts.js';
import type { Reproduction, Workbench } from '../types.js';

const NUDGE =
  'Please continue by calling one of the tools. When your test is written and fails on the current code because of the issue, call submit.';

export async function runAgentStrategy(ctx: StrategyContext): Promise<Reproduction> {
  const { workbench, issue, budget, log, llm } = ctx;
  if (!llm) return toReproduction('agent', budget, { reason: 'no LLM endpoint is configured' });
  const run = new AgentRun(ctx, new History(AGENT_SYSTEM_PROMPT, agentInstructions(issue, workbench.testCommand), { maxChars: ctx.options.agent?.historyChars }));
  const session = await workbench.openSession();
  try {
    await run.loop(session);
    // Keep what it has: test files written but never verified (budget ran out, or no submit).
    if (!run.candidate || run.dirtySinceVerify) {
      const { testPatch } = testPartOf(await session.diff());
      if (testPatch.trim()) {
        log.info({ stopReason: run.stopReason }, 'agent: verifying the test files it left');
        run.candidate = await evaluateCandidate(ctx, testPatch);
      }
    }
    await run.revise();
  } finally {
    await session.close().catch((e) => log.warn({ err: String(e) }, 'agent: closing the session failed'));
  }
  return run.result();
}

type Session = Awaited<ReturnType<Workbench['openSession']>>;

/** One agent run: the conversation, what it did, and the candidate it submitted or left. */
class AgentRun {
  readonly maxSubmits: number;
  readonly secrets = secretValues();
  readonly toolCounts: Record<string, number> = {};
  readonly transcript: string[] = [];
  submits = 0;
  exhausted: BudgetDimension | undefined;
  stopReason = '';
  candidate: CandidateResult | undefined;
  dirtySinceVerify = false;
  malformed = 0;
  idleTurns = 0;
  feedbackRounds = 0;

  // Plain fields, not parameter properties: the App's child processes run this file with Node's type stripping, which has none.
  readonly ctx: StrategyContext;
  readonly history: History;

  constructor(ctx: StrategyContext, history: History) {
    this.ctx = ctx;
    this.history = history;
    this.maxSubmits = ctx.options.agent?.maxSubmits ?? 2;
  }

  /** Turns until a verified submit, the submit limit, the budget or the LLM ends it. */
  async loop(session: Session): Promise<void> {
    const { budget, llm } = this.ctx;
    const { history, transcript } = this;
    for (;;) {
      let resp: ChatResponse;
      try {
        resp = await llm!.chat({ messages: history.render(), tools: AGENT_TOOLS, purpose: 'agent' }, { budget });
      } catch (e) {
        if (isLlmFailure(e)) {
          this.stopReason = `the LLM failed after ${budget.steps} call(s): ${e.message}`;
          return;
        }
        if (!isBudgetExhausted(e)) throw e;
        this.exhausted = (e as { dimension?: BudgetDimension }).dimension ?? budget.exhaustedBy ?? 'steps';
        this.stopReason = `budget exhausted (${this.exhausted}) after ${budget.steps} LLM call(s)`;
        return;
      }
      history.addAssistant(resp);
      if (!resp.toolCalls.length) {
        this.idleTurns++;
        transcript.push(`${budget.steps}: (no tool call) ${resp.content.slice(0, 120)}`);
        history.addUser(NUDGE);
        continue;
      }
      for (const call of resp.toolCalls) {
        this.toolCounts[call.name] = (this.toolCounts[call.name] ?? 0) + 1;
        if (call.parseError) this.malformed++;
        if (call.name === 'submit' && !call.parseError) {
          if ((await this.submit(session, call)) === 'stop') return;
          continue;
        }
        const out = await executeTool(call, { session, workbench: this.ctx.workbench, issue: this.ctx.issue, secrets: this.secrets, maxOutputChars: 8000 });
        if (out.wrote?.length) this.dirtySinceVerify = true;
        transcript.push(`${budget.steps}: ${call.name}(${call.parseError ? 'malformed arguments' : call.rawArguments.slice(0, 100)}) → ${out.output.split('\n')[0].slice(0, 100)}`);
        history.addToolResult(call, out.output);
      }
    }
  }

  /** A submit: the test files verified; the run stops on a reproduction or at the submit limit. */
  async submit(session: Session, call: ToolCall): Promise<'stop' | 'continue'> {
    const { budget } = this.ctx;
    this.submits++;
    const { testPatch } = testPartOf(await session.diff());
    if (!testPatch.trim()) {
      this.transcript.push(`${budget.steps}: submit (no test file yet)`);
      this.history.addToolResult(call, 'error: nothing to submit: you have not written any test file yet.');
      if (this.submits < this.maxSubmits + 1) return 'continue';
      this.stopReason = 'submitted without writing a test';
      return 'stop';
    }
    const candidate = await evaluateCandidate(this.ctx, testPatch);
    this.candidate = candidate;
    this.dirtySinceVerify = false;
    this.transcript.push(`${budget.steps}: submit #${this.submits} → ${candidate.status}: ${candidate.reason}`);
    const stop = candidate.status === 'reproduced' || this.submits >= this.maxSubmits || candidate.budgetExhausted;
    // Every tool call gets its answer, the last one too: execution feedback may continue the conversation.
    this.history.addToolResult(
      call,
      candidate.status === 'reproduced'
        ? `Verified: ${candidate.reason}`
        : `Verification rejected the submitted test: ${candidate.reason}\n${passedOnBase(candidate) ? `${FLIP_HINT}\n` : ''}${candidate.failureExcerpt ?? ''}\nRevise the test so that it fails on the current code because of the issue, run it, and submit again.`,
    );
    if (!stop) return 'continue';
    this.stopReason = candidate.status === 'reproduced' ? 'submitted a verified reproduction' : `submitted ${this.submits} time(s)`;
    return 'stop';
  }

  /**
   * Execution feedback once the loop has ended with a test that does not reproduce (the submit
   * limit, or the model stopped calling tools): the conversation, what the run said, and a request
   * for the corrected test file, within `options.feedback.rounds`. Not after the budget or the LLM gave out.
   */
  async revise(): Promise<void> {
    const c = this.candidate;
    if (!c || c.status === 'reproduced' || c.budgetExhausted || this.exhausted || this.stopReason.startsWith('the LLM failed')) return;
    const revised = await withFeedback(this.ctx, this.history.render(), c, extractPatchText);
    if (!revised.feedbackRounds) return;
    this.feedbackRounds = revised.feedbackRounds;
    this.candidate = revised;
    this.transcript.push(`${this.ctx.budget.steps}: feedback round(s) ${revised.feedbackRounds} → ${revised.status}: ${revised.reason}`);
  }

  result(): Reproduction {
    const { budget } = this.ctx;
    const { candidate, stopReason, exhausted, submits } = this;
    const details = { toolCalls: this.toolCounts, submits, feedbackRounds: this.feedbackRounds, idleTurns: this.idleTurns, malformedToolCalls: this.malformed, summarisedMessages: this.history.summarised, transcript: this.transcript };
    const notes = [stopReason || 'stopped', ...(submits === 0 ? ['the agent never submitted; its test files were verified as they were'] : [])];
    if (!candidate) {
      return toReproduction('agent', budget, {
        reason: `${stopReason || 'stopped'}: no test file was written`,
        budgetExhausted: exhausted,
        evidence: { applied: false, testFiles: [], runs: [], reproducingTests: [], notes, details },
      });
    }
    return toReproduction('agent', budget, {
      ...candidate,
      reason: (exhausted || stopReason.startsWith('the LLM failed')) && candidate.status !== 'reproduced' ? `${stopReason}; ${candidate.reason}` : candidate.reason,
      budgetExhausted: exhausted ?? candidate.budgetExhausted,
      evidence: { ...candidate.evidence, notes: [...notes, ...candidate.evidence.notes], details },
    });
  }
}
