import type { Redis } from 'ioredis';
import type { Subscription } from 'rxjs';
import { CommandForwarder } from './command-forwarder.js';
import { WriterInbox, type CommandHandler } from './command-inbox.js';
import type { ForwardedCommand } from './command-wire.js';
import type { ClusterLog } from './lock-session.js';
import { WriterElection, type Role } from './writer-election.js';

export interface ClusterNodeOptions {
  databaseUrl: string;
  redis: Redis;
  instanceId: string;
  /** Runs a command on this instance's engine of the world (as writer); throws DomainError. */
  handler: CommandHandler;
  /**
   * A term begins: restore the world's engine from the database (after the epoch increment, so
   * it holds every commit of the previous term), keep the epoch for the fence, start its timers.
   * Forwarded commands are served only once this settles.
   */
  onTerm: (world: string, epoch: number) => void | Promise<void>;
  /** A term ended (forwarding has stopped already): stop the world's timers, refuse local commits. */
  onStepDown: (world: string, epoch: number | null) => void;
  retryMs?: number;
  forwardTimeoutMs?: number;
  forwardGraceMs?: number;
  log: ClusterLog;
}

/**
 * One instance's part in the cluster: it campaigns for the worlds' writer roles (WriterElection),
 * serves forwarded commands for the worlds it writes (WriterInbox) and forwards the commands of
 * the others to their writers (CommandForwarder). `execute` is the one entry for a trading
 * command: run here when this instance is the world's writer, else on the writer.
 */
export class ClusterNode {
  readonly election: WriterElection;
  readonly inbox: WriterInbox;
  readonly forwarder: CommandForwarder;
  private readonly roles: Subscription;
  /** Role changes are applied one at a time, in order (a term's start is async). */
  private changes: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ClusterNodeOptions) {
    this.election = new WriterElection({
      databaseUrl: opts.databaseUrl,
      instanceId: opts.instanceId,
      retryMs: opts.retryMs,
      log: opts.log,
    });
    this.inbox = new WriterInbox({
      redis: opts.redis,
      instanceId: opts.instanceId,
      handler: opts.handler,
      log: opts.log,
    });
    this.forwarder = new CommandForwarder({
      redis: opts.redis,
      instanceId: opts.instanceId,
      timeoutMs: opts.forwardTimeoutMs ?? 3000,
      graceMs: opts.forwardGraceMs ?? 1000,
      log: opts.log,
    });
    this.roles = this.election.roles$.subscribe((role) => {
      if (role.writer) {
        this.changes = this.changes.then(() => this.startTerm(role));
        return;
      }
      // Stepping down is at once, synchronously with the lost session: local commands stop
      // (isWriter), forwarders stop sending here (the presence goes), then the engine stops.
      void this.inbox.unserve(role.world);
      this.opts.onStepDown(role.world, role.epoch);
    });
  }

  /**
   * Campaigns for these worlds (and later ones with campaign()) and starts forwarding. Settles
   * once the first campaign round is over and the terms it won have begun (their engines
   * restored, their timers caught up): an instance that starts listening after this serves the
   * worlds it could take at once, instead of answering 503 until its first round.
   */
  async start(worlds: readonly string[]): Promise<void> {
    for (const w of worlds) this.election.campaign(w);
    this.forwarder.start();
    this.election.start();
    await this.election.tick();
    await this.changes;
  }

  campaign(world: string): void {
    this.election.campaign(world);
  }

  /** Settles once the role changes seen so far are applied (the terms won have begun). */
  async applied(): Promise<void> {
    await this.changes;
  }

  /** Whether this instance runs the world's commands itself now. */
  isWriter(world: string): boolean {
    return this.election.isWriter(world) && this.inbox.isServing(world);
  }

  /**
   * Runs a trading command: here through the handler when this instance serves the world as
   * its writer, else on the writer over Redis. Either way the result is what the handler
   * returned (JSON-plain values only, as a forwarded one arrives), or its DomainError, or 503
   * WRITER_UNAVAILABLE.
   */
  async execute<T = unknown>(world: string, command: ForwardedCommand): Promise<T> {
    if (this.isWriter(world)) return (await this.opts.handler(world, command)) as T;
    return this.forwarder.forward<T>(world, command);
  }

  async stop(): Promise<void> {
    await this.inbox.stop();
    await this.election.stop();
    this.roles.unsubscribe();
    await this.changes;
    await this.forwarder.stop();
  }

  private async startTerm(role: Role): Promise<void> {
    try {
      await this.opts.onTerm(role.world, role.epoch!);
    } catch (err) {
      // A writer that cannot restore its engine must not serve: give the role to another.
      this.opts.log.error(`starting the ${role.world} writer term failed: ${String(err)}`);
      await this.election.resign(role.world);
      this.election.campaign(role.world);
      return;
    }
    // Still the writer of this term (not stepped down while restoring).
    if (this.election.epoch(role.world) === role.epoch) this.inbox.serve(role.world);
  }
}
