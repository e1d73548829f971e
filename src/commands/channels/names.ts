/**
 * Creating, renaming and deleting a channel touch two streams: the channel and its name's
 * reservation in the tenant (`channelNames`). The reservation comes first and is released again
 * when the channel command is refused (best effort; a retry with the same channel id reuses it).
 *
 * Channels created before names were reserved hold no reservation: `existing` (the tenant's
 * channels as the read model shows them) catches a clash with one of those.
 */
import { ConflictError } from '../../errors.js';
import type { CommandBus } from '../bus.js';
import type { CommandContext, CommandResult } from '../decider.js';
import { channelNameKey, channelNameReservationId, channelNames, channels, type ChannelCommand, type ChannelState } from './decider.js';
import type { ChannelEvent } from './events.js';

/** The tenant's channels as the read model shows them (id and name). */
export type ExistingChannels = () => Promise<ReadonlyArray<{ id: string; name: string }>>;

async function refuseTakenByExisting(channelId: string, name: string, existing: ExistingChannels | undefined): Promise<void> {
  if (!existing) return;
  const key = channelNameKey(name);
  if ((await existing()).some((c) => c.id !== channelId && channelNameKey(c.name) === key)) {
    throw new ConflictError(`a channel named "${name}" already exists`, 'channel_name_taken', 'name');
  }
}

async function reserve(commands: CommandBus, tenantId: string, channelId: string, name: string, context: CommandContext): Promise<void> {
  await commands.execute(channelNames, channelNameReservationId(tenantId, name), { type: 'ReserveChannelName', channelId, name }, context);
}

async function release(commands: CommandBus, tenantId: string, channelId: string, name: string, context: CommandContext): Promise<void> {
  await commands.execute(channelNames, channelNameReservationId(tenantId, name), { type: 'ReleaseChannelName', channelId }, context);
}

type CreateChannel = Extract<ChannelCommand, { type: 'CreateChannel' }>;
type UpdateChannel = Extract<ChannelCommand, { type: 'UpdateChannel' }>;

/** Creates a channel under a name no other channel of the tenant has; else 409 `channel_name_taken`. */
export async function createChannel(commands: CommandBus, command: CreateChannel, context: CommandContext, existing?: ExistingChannels): Promise<CommandResult<ChannelState, ChannelEvent>> {
  const name = command.settings.name;
  await refuseTakenByExisting(command.channelId, name, existing);
  await reserve(commands, context.tenantId, command.channelId, name, context);
  try {
    return await commands.execute(channels, command.channelId, command, context);
  } catch (error) {
    // The channel exists already (a retry of the same creation): it keeps its reservation.
    if (!(error instanceof Error && 'code' in error && error.code === 'channel_exists')) {
      await release(commands, context.tenantId, command.channelId, name, context).catch(() => undefined);
    }
    throw error;
  }
}

/**
 * Changes a channel; a new name is reserved first and the old one released after. The old name is
 * the channel's current one as its own stream tells (`current`), so a rename is decided on the
 * channel's history, not on a read model that may lag.
 */
export async function updateChannel(
  commands: CommandBus,
  channelId: string,
  command: UpdateChannel,
  context: CommandContext,
  currentName: string | null,
  existing?: ExistingChannels,
): Promise<CommandResult<ChannelState, ChannelEvent>> {
  const name = command.changes.name;
  // Only a new name in the sense of uniqueness needs a reservation ("Main" -> "main " does not).
  const newKey = name !== undefined && currentName !== null && channelNameKey(name) !== channelNameKey(currentName);
  if (newKey) {
    await refuseTakenByExisting(channelId, name, existing);
    await reserve(commands, context.tenantId, channelId, name, context);
  }
  let result: CommandResult<ChannelState, ChannelEvent>;
  try {
    result = await commands.execute(channels, channelId, command, context);
  } catch (error) {
    if (newKey) await release(commands, context.tenantId, channelId, name, context).catch(() => undefined);
    throw error;
  }
  if (newKey) await release(commands, context.tenantId, channelId, currentName, context);
  return result;
}

/** Deletes a channel and frees its name. */
export async function deleteChannel(commands: CommandBus, channelId: string, context: CommandContext, currentName: string | null): Promise<CommandResult<ChannelState, ChannelEvent>> {
  const result = await commands.execute(channels, channelId, { type: 'DeleteChannel' }, context);
  if (currentName !== null) await release(commands, context.tenantId, channelId, currentName, context);
  return result;
}
