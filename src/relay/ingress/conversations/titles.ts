/**
 * Titles after a conversation's first exchange, made beside the reply (never awaited by it): the
 * tenant's `relay_settings.conversation_title_model` is asked through the relay gate as the same
 * caller (routing, billing, usage event: the user's own traffic), else — or when that fails — the
 * first words of the first message. Stored with `RenameConversation { generated: true }`, which
 * never replaces a title the conversation has meanwhile.
 */
import type { CommandBus } from '../../../commands/bus.js';
import { conversations } from '../../../commands/conversations/decider.js';
import { TITLE, type ConversationTexts } from '../../../conversations/texts.js';
import type { HeaderValue, HttpRequestLike, RelayResponse } from '../../../http-exchange.js';
import { timeOrderedUuid } from '../../../ids.js';
import type { Logger } from '../../../logger.js';
import type { RelayCaller } from '../../access/caller.js';
import { asSent, type Ingress, type RelayGate } from '../../gate.js';
import { parseChatRequest } from '../chat-completions.js';
import { cleanTitle, titleFromText, titleRequest } from './title.js';

export interface TitleDeps {
  gate: Pick<RelayGate, 'pass'>;
  commands: CommandBus;
  texts: ConversationTexts;
  logger: Logger;
  /** The tenant's title model (relay_settings.conversation_title_model), or null. */
  titleModel(tenantId: string): string | null;
}

export interface FirstExchange {
  /** The reply's request (its credentials ask the title model as the same caller). */
  request: HttpRequestLike;
  caller: RelayCaller;
  conversationId: string;
  question: string;
  answer: string;
}

/** A whole answer kept in memory (the title request is nobody's HTTP exchange). */
class KeptAnswer implements RelayResponse {
  status = 0;
  body = '';
  setHeader(_name: string, _value: HeaderValue): void {}
  send(status: number, _headers: Record<string, HeaderValue>, body: string): void {
    this.status = status;
    this.body = body;
  }
  start(status: number): void {
    this.status = status;
  }
  write(text: string): boolean {
    this.body += text;
    return true;
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  end(): void {}
  readonly closed = false;
  onClose(): void {}
  offClose(): void {}
}

const chatIngress: Ingress = { prepare: asSent, parse: parseChatRequest, relay: (relay, exchange) => relay.complete(exchange) };

export class ConversationTitles {
  /** Titles being made (tests and shutdown wait for them). */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: TitleDeps) {}

  /** Starts titling the conversation; returns at once. */
  afterFirstExchange(exchange: FirstExchange): void {
    const making = this.title(exchange).catch((error: unknown) => this.deps.logger.warn({ err: error, conversation_id: exchange.conversationId }, 'conversation title not stored'));
    this.pending.add(making);
    void making.finally(() => this.pending.delete(making));
  }

  /** Resolves once every title started so far is stored (or given up). */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async title(exchange: FirstExchange): Promise<void> {
    const { caller, conversationId } = exchange;
    const userId = caller.userId!;
    const model = this.deps.titleModel(caller.tenantId);
    const title = (model === null ? '' : await this.askModel(model, exchange)) || titleFromText(exchange.question);
    if (title === '') return;
    const sealed = await this.deps.texts.seal({ userId }, conversationId, TITLE, title);
    await this.deps.commands.execute(conversations, conversationId, { type: 'RenameConversation', title: sealed, generated: true }, { tenantId: caller.tenantId, causationId: null });
  }

  /** The title model's answer, cleaned; '' when it failed (logged) or said nothing usable. */
  private async askModel(model: string, { request, question, answer }: FirstExchange): Promise<string> {
    const kept = new KeptAnswer();
    // A request of its own (its own id, so its own usage event), with the reply's credentials.
    const titling: HttpRequestLike = { id: timeOrderedUuid(), method: 'POST', headers: request.headers, socket: { remoteAddress: request.socket.remoteAddress } };
    try {
      await this.deps.gate.pass(chatIngress, titling, kept, titleRequest(model, question, answer));
    } catch (error) {
      this.deps.logger.warn({ err: error, request_id: titling.id }, 'the title model did not answer');
      return '';
    }
    if (kept.status !== 200) return '';
    try {
      const completion = JSON.parse(kept.body) as { choices?: Array<{ message?: { content?: unknown } }> };
      const content = completion.choices?.[0]?.message?.content;
      return typeof content === 'string' ? cleanTitle(content) : '';
    } catch {
      return '';
    }
  }
}
