import type { Actor } from '../core/principal.js'
import type { NewEvent } from './types.js'

/** What an event type says happened, as a label and a summary phrase (`{flag}`, `{env}`, `{project}` are filled in). */
const phrases: Record<string, [label: string, summary: string]> = {
  'feature-created': ['Flag created', 'created **{flag}** in project *{project}*'],
  'feature-archived': ['Flag archived', 'archived **{flag}**'],
  'feature-revived': ['Flag revived', 'revived **{flag}**'],
  'feature-metadata-updated': ['Flag updated', 'updated the metadata of **{flag}**'],
  'feature-type-updated': ['Flag type changed', 'changed the type of **{flag}**'],
  'feature-stale-on': ['Flag marked stale', 'marked **{flag}** as stale'],
  'feature-stale-off': ['Flag no longer stale', 'marked **{flag}** as not stale'],
  'feature-potentially-stale-on': ['Flag potentially stale', 'marked **{flag}** as potentially stale'],
  'feature-environment-enabled': ['Flag enabled', 'enabled **{flag}** in *{env}*'],
  'feature-environment-disabled': ['Flag disabled', 'disabled **{flag}** in *{env}*'],
  'feature-strategy-add': ['Strategy added', 'added a strategy to **{flag}** in *{env}*'],
  'feature-strategy-update': ['Strategy updated', 'updated a strategy of **{flag}** in *{env}*'],
  'feature-strategy-remove': ['Strategy removed', 'removed a strategy from **{flag}** in *{env}*'],
  'strategy-order-changed': ['Strategy order changed', 'reordered the strategies of **{flag}** in *{env}*'],
  'feature-variants-updated': ['Variants updated', 'updated the variants of **{flag}** in *{env}*'],
  'feature-environment-variants-updated': ['Variants updated', 'updated the variants of **{flag}** in *{env}*'],
  'feature-tagged': ['Flag tagged', 'tagged **{flag}**'],
  'feature-untagged': ['Flag untagged', 'removed a tag from **{flag}**'],
  'feature-dependency-added': ['Dependency added', 'made **{flag}** depend on another flag'],
  'feature-dependency-removed': ['Dependency removed', 'removed a dependency of **{flag}**'],
  'feature-dependencies-removed': ['Dependencies removed', 'removed every dependency of **{flag}**'],
  'feature-favorited': ['Flag favorited', 'favorited **{flag}**'],
  'feature-unfavorited': ['Flag unfavorited', 'unfavorited **{flag}**'],
  'feature-completed': ['Flag completed', 'marked **{flag}** as completed'],
  'feature-uncompleted': ['Flag uncompleted', 'marked **{flag}** as not completed'],
  'project-created': ['Project created', 'created project *{project}*'],
  'project-updated': ['Project updated', 'updated project *{project}*'],
  'project-environment-added': ['Environment added to project', 'added *{env}* to project *{project}*'],
  'default-strategy-updated': ['Default strategy updated', 'updated the default strategy of project *{project}* in *{env}*'],
  'project-favorited': ['Project favorited', 'favorited project *{project}*'],
  'project-unfavorited': ['Project unfavorited', 'unfavorited project *{project}*'],
  'environment-created': ['Environment created', 'created environment *{env}*'],
  'segment-created': ['Segment created', 'created a segment'],
  'segment-updated': ['Segment updated', 'updated a segment'],
  'segment-deleted': ['Segment deleted', 'deleted a segment'],
  'context-field-created': ['Context field created', 'created a context field'],
  'context-field-updated': ['Context field updated', 'updated a context field'],
  'context-field-deleted': ['Context field deleted', 'deleted a context field'],
  'strategy-created': ['Strategy type created', 'created a strategy type'],
  'strategy-updated': ['Strategy type updated', 'updated a strategy type'],
  'strategy-deleted': ['Strategy type deleted', 'deleted a strategy type'],
  'strategy-deprecated': ['Strategy type deprecated', 'deprecated a strategy type'],
  'strategy-reactivated': ['Strategy type reactivated', 'reactivated a strategy type'],
  'api-token-created': ['API token created', 'created an API token'],
  'api-token-deleted': ['API token deleted', 'deleted an API token'],
  'application-created': ['Application created', 'reported a new SDK application'],
  'user-created': ['User created', 'created a user'],
  'user-updated': ['User updated', 'updated a user'],
  'user-deleted': ['User deleted', 'deleted a user'],
  'pat-created': ['Personal access token created', 'created a personal access token'],
  'pat-deleted': ['Personal access token deleted', 'deleted a personal access token'],
  'project-access-added': ['Project access added', 'gave users roles in project *{project}*'],
  'project-access-user-roles-updated': ['Project roles changed', "changed a user's roles in project *{project}*"],
  'project-access-user-roles-deleted': ['Project access removed', "removed a user's access to project *{project}*"],
  'setting-created': ['Setting created', 'saved a setting'],
  'setting-updated': ['Setting updated', 'updated a setting'],
  'setting-deleted': ['Setting reset', 'reset a setting'],
  'change-edited': ['Change edited', 'edited a change to **{flag}** in a change request for *{env}*'],
  'change-discarded': ['Change discarded', 'discarded a change to **{flag}** from a change request for *{env}*'],
  'change-request-discarded': ['Change request discarded', 'discarded a draft change request for *{env}* of project *{project}*'],
  'change-request-scheduled': ['Change request scheduled', 'scheduled a change request for *{env}* of project *{project}*'],
  'change-request-schedule-suspended': ['Change request suspended', 'suspended the schedule of a change request for *{env}* of project *{project}*'],
  'change-request-scheduled-application-success': ['Scheduled change request applied', 'applied a scheduled change request to *{env}* of project *{project}*'],
  'change-request-scheduled-application-failure': ['Scheduled change request failed', 'could not apply a scheduled change request to *{env}* of project *{project}*'],
  'banner-created': ['Banner created', 'created a banner'],
  'banner-updated': ['Banner updated', 'updated a banner'],
  'banner-deleted': ['Banner deleted', 'deleted a banner'],
}

const sentenceCase = (type: string) => type.charAt(0).toUpperCase() + type.slice(1).replaceAll('-', ' ')

/** A short label and a markdown summary, e.g. "**admin** disabled **checkout** in *production*". */
export function describeEvent(actor: Actor, e: NewEvent): { label: string; summary: string } {
  const [label, phrase] = phrases[e.type] ?? [sentenceCase(e.type), `recorded *${e.type}*${e.featureName ? ' for **{flag}**' : ''}`]
  const summary = phrase
    .replaceAll('{flag}', e.featureName ?? 'a flag')
    .replaceAll('{env}', e.environment ?? 'every environment')
    .replaceAll('{project}', e.project ?? 'unknown')
  return { label, summary: `**${actor.createdBy}** ${summary}` }
}
