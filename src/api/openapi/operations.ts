/**
 * Every documented operation's contract for code generators, in one table: its `operationId`
 * (generated clients name their methods after it, so a change is a breaking change for them) and
 * who may call it (its `security`). Keys are `METHOD path` as the document writes the path.
 * test/http/openapi.test.ts fails when a route of the document is missing here.
 */

/**
 * Who may call an operation. `user`: an access token (Bearer JWT) or the session cookie; `key`:
 * also an API key; `anthropic`: also an API key in `x-api-key`; `optional`: anyone, a caller
 * changes the answer; `public`: no credentials.
 */
export type Access = 'public' | 'optional' | 'user' | 'key' | 'anthropic';

export interface Operation {
  id: string;
  /** Default `user`. */
  access?: Access;
  /** The name of the path's wildcard parameter (fastify's `*`, which is no name for a client). */
  wildcard?: string;
  /**
   * With `stream: true` the 200 answer is `text/event-stream`: the component schema of one
   * event's data (the stream ends with `data: [DONE]` where the API has it).
   */
  stream?: string;
}

const pub = (id: string): Operation => ({ id, access: 'public' });
const key = (id: string): Operation => ({ id, access: 'key' });

export const OPERATIONS: Readonly<Record<string, Operation>> = {
  // system
  'GET /health': pub('getHealth'),
  'GET /health/ready': pub('getReadiness'),
  'GET /health/live': pub('getLiveness'),
  'GET /v1/system/version': pub('getSystemVersion'),
  'GET /v1/admin/maintenance': { id: 'getMaintenance' },
  'POST /v1/admin/maintenance': { id: 'setMaintenance' },
  // auth
  'POST /v1/auth/login': pub('login'),
  'POST /v1/auth/refresh': pub('refreshSession'),
  'POST /v1/auth/logout': { id: 'logout', access: 'optional' },
  // tenants and users
  'POST /v1/admin/tenants': { id: 'createTenant' },
  'GET /v1/admin/tenants': { id: 'listTenants' },
  'GET /v1/admin/tenants/{tenant_id}': { id: 'getTenant' },
  'POST /v1/admin/tenants/{tenant_id}/disable': { id: 'disableTenant' },
  'POST /v1/admin/tenants/{tenant_id}/enable': { id: 'enableTenant' },
  'POST /v1/admin/users': { id: 'createUser' },
  'GET /v1/admin/users': { id: 'listUsers' },
  'GET /v1/admin/users/{user_id}': { id: 'getUser' },
  'PATCH /v1/admin/users/{user_id}': { id: 'updateUser' },
  'DELETE /v1/admin/users/{user_id}': { id: 'deleteUser' },
  'POST /v1/admin/users/{user_id}/disable': { id: 'disableUser' },
  'POST /v1/admin/users/{user_id}/enable': { id: 'enableUser' },
  'POST /v1/admin/users/{user_id}/mfa/reset': { id: 'resetUserMfa' },
  'GET /v1/users/me': { id: 'getMe' },
  'PATCH /v1/users/me': { id: 'updateMe' },
  'POST /v1/users/me/password': { id: 'changeMyPassword' },
  'POST /v1/users/me/mfa/enroll': { id: 'enrollMyMfa' },
  'POST /v1/users/me/mfa/verify': { id: 'verifyMyMfa' },
  'POST /v1/users/me/mfa/disable': { id: 'disableMyMfa' },
  // channels
  'POST /v1/admin/channels': { id: 'createChannel' },
  'GET /v1/admin/channels': { id: 'listChannels' },
  'GET /v1/admin/channels/{channel_id}': { id: 'getChannel' },
  'PATCH /v1/admin/channels/{channel_id}': { id: 'updateChannel' },
  'DELETE /v1/admin/channels/{channel_id}': { id: 'deleteChannel' },
  'POST /v1/admin/channels/{channel_id}/test': { id: 'testChannel' },
  // the relay
  'POST /v1/chat/completions': { ...key('createChatCompletion'), stream: 'ChatCompletionChunk' },
  'POST /api/v1/chat/completions': { ...key('createChatCompletionAtApiPrefix'), stream: 'ChatCompletionChunk' },
  'POST /v1/chat': { ...key('createChatCompletionDeprecatedAlias'), stream: 'ChatCompletionChunk' },
  'POST /v1/embeddings': key('createEmbeddings'),
  'GET /v1/models': key('listModels'),
  'GET /v1/models/{*}': { id: 'retrieveModel', access: 'key', wildcard: 'model' },
  'POST /v1/messages': { id: 'createMessage', access: 'anthropic', stream: 'AnthropicMessageStreamEvent' },
  'POST /v1/messages/count_tokens': { id: 'countMessageTokens', access: 'anthropic' },
  'POST /v1/responses': { ...key('createResponse'), stream: 'ResponseStreamEvent' },
  'GET /v1/responses/{id}': key('getResponse'),
  'DELETE /v1/responses/{id}': key('deleteResponse'),
  'GET /v1/responses/{id}/input_items': key('listResponseInputItems'),
  // API keys
  'POST /api/admin/keys': { id: 'createTenantApiKey' },
  'GET /api/admin/keys': { id: 'listTenantApiKeys' },
  'GET /api/admin/keys/{key_id}': { id: 'getTenantApiKey' },
  'PATCH /api/admin/keys/{key_id}': { id: 'updateTenantApiKey' },
  'DELETE /api/admin/keys/{key_id}': { id: 'deleteTenantApiKey' },
  'POST /v1/keys': { id: 'createApiKey' },
  'GET /v1/keys': { id: 'listApiKeys' },
  'GET /v1/keys/{key_id}': { id: 'getApiKey' },
  'PATCH /v1/keys/{key_id}': { id: 'updateApiKey' },
  'DELETE /v1/keys/{key_id}': { id: 'deleteApiKey' },
  // billing
  'GET /v1/admin/pricing': { id: 'getPricing' },
  'PUT /v1/admin/pricing': { id: 'replacePricing' },
  'PUT /v1/admin/pricing/default': { id: 'setDefaultPrice' },
  'POST /v1/admin/pricing/models': { id: 'setModelPrice' },
  'PUT /v1/admin/pricing/models/{model}': { id: 'setModelPriceByName' },
  'DELETE /v1/admin/pricing/models/{model}': { id: 'deleteModelPrice' },
  'POST /v1/admin/credits/{user_id}/topup': { id: 'topUpCredits' },
  'POST /v1/admin/credits/{user_id}/adjust': { id: 'adjustCredits' },
  'GET /v1/admin/credits': { id: 'listCreditBalances' },
  'GET /v1/admin/credits/{user_id}': { id: 'getUserCreditBalance' },
  'GET /v1/credits': { id: 'getMyCreditBalance' },
  'GET /v1/admin/billing/ledger': { id: 'listLedgerEntries' },
  'GET /v1/billing/ledger': { id: 'listMyLedgerEntries' },
  'GET /v1/admin/billing/statements': { id: 'getStatement' },
  'GET /v1/billing/statements': { id: 'getMyStatement' },
  'GET /v1/admin/settings': { id: 'getSettings' },
  'PUT /v1/admin/settings': { id: 'replaceSettings' },
  'PATCH /v1/admin/settings': { id: 'updateSettings' },
  'POST /v1/admin/plans': { id: 'createPlan' },
  'GET /v1/admin/plans': { id: 'listPlans' },
  'GET /v1/plans': { id: 'listAvailablePlans' },
  'GET /v1/admin/plans/{plan_id}': { id: 'getPlan' },
  'PATCH /v1/admin/plans/{plan_id}': { id: 'updatePlan' },
  'DELETE /v1/admin/plans/{plan_id}': { id: 'deletePlan' },
  'POST /v1/subscriptions': { id: 'subscribe' },
  'GET /v1/subscriptions': { id: 'getMySubscription' },
  'POST /v1/subscriptions/renew': { id: 'renewMySubscription' },
  'POST /v1/subscriptions/cancel': { id: 'cancelMySubscription' },
  'GET /v1/admin/subscriptions': { id: 'listSubscriptions' },
  'GET /v1/admin/subscriptions/{user_id}': { id: 'getUserSubscription' },
  'POST /v1/admin/subscriptions/{user_id}': { id: 'subscribeUser' },
  'POST /v1/admin/subscriptions/{user_id}/renew': { id: 'renewUserSubscription' },
  'POST /v1/admin/subscriptions/{user_id}/cancel': { id: 'cancelUserSubscription' },
  // usage, audit, projections
  'GET /v1/admin/usage': { id: 'getUsage' },
  'GET /v1/admin/usage/requests': { id: 'listUsageRequests' },
  'GET /v1/usage': { id: 'getMyUsage' },
  'GET /v1/usage/requests': { id: 'listMyUsageRequests' },
  'POST /v1/admin/audit/replay': { id: 'replayAudit' },
  'GET /v1/admin/audit/history': { id: 'listAuditHistory' },
  'GET /v1/admin/projections/quarantine': { id: 'listQuarantinedEvents' },
  'POST /v1/admin/projections/quarantine/replay': { id: 'replayQuarantinedEvents' },
  // webhooks
  'POST /v1/admin/webhooks': { id: 'createWebhook' },
  'GET /v1/admin/webhooks': { id: 'listWebhooks' },
  'GET /v1/admin/webhooks/{id}': { id: 'getWebhook' },
  'PATCH /v1/admin/webhooks/{id}': { id: 'updateWebhook' },
  'DELETE /v1/admin/webhooks/{id}': { id: 'deleteWebhook' },
  'POST /v1/admin/webhooks/{id}/test': { id: 'testWebhook' },
  'GET /v1/admin/webhooks/{id}/deliveries': { id: 'listWebhookDeliveries' },
  'POST /v1/admin/webhooks/{id}/deliveries/{delivery_id}/redeliver': { id: 'redeliverWebhookDelivery' },
  // presets
  'POST /api/presets': { id: 'createPreset' },
  'GET /api/presets': { id: 'listPresets' },
  'GET /api/presets/search': { id: 'searchPresets' },
  'GET /api/presets/sync': { id: 'syncPresets' },
  'GET /api/presets/user/{user_id}': { id: 'listUserPresets' },
  'GET /api/presets/{preset_id}': { id: 'getPreset' },
  'PATCH /api/presets/{preset_id}': { id: 'updatePreset' },
  'DELETE /api/presets/{preset_id}': { id: 'deletePreset' },
  'POST /api/presets/{preset_id}/clone': { id: 'clonePreset' },
  'POST /api/admin/presets/reload': { id: 'reloadBuiltinPresets' },
  // conversations
  'POST /v1/conversations': { id: 'createConversation' },
  'GET /v1/conversations': { id: 'listConversations' },
  'GET /v1/conversations/{id}': { id: 'getConversation' },
  'PATCH /v1/conversations/{id}': { id: 'updateConversation' },
  'DELETE /v1/conversations/{id}': { id: 'deleteConversation' },
  'GET /v1/conversations/search': { id: 'searchConversations' },
  'GET /v1/conversations/sync': { id: 'syncConversations' },
  'GET /v1/conversations/{id}/export': { id: 'exportConversation' },
  'GET /v1/admin/conversations/counts': { id: 'getConversationCounts' },
  'POST /v1/conversations/{id}/messages': { id: 'sendConversationMessage', stream: 'ConversationStreamEvent' },
  'POST /v1/conversations/{id}/regenerate': { id: 'regenerateConversationReply', stream: 'ConversationStreamEvent' },
  'PUT /v1/conversations/{id}/messages/{message_id}': { id: 'editConversationMessage', stream: 'ConversationStreamEvent' },
  'POST /v1/conversations/{id}/stop': { id: 'stopConversationReply' },
  // files
  'POST /v1/files': key('uploadFile'),
  'GET /v1/files': key('listFiles'),
  'GET /v1/files/{id}': key('getFile'),
  'DELETE /v1/files/{id}': key('deleteFile'),
  'GET /v1/files/{id}/content': key('downloadFileContent'),
  'GET /v1/files/{id}/text': key('getFileText'),
  'GET /v1/admin/files/usage': { id: 'getFileUsage' },
  // operations: alerts and logs
  'POST /api/admin/alerts/rules': { id: 'createAlertRule' },
  'GET /api/admin/alerts/rules': { id: 'listAlertRules' },
  'GET /api/admin/alerts/rules/{rule_id}': { id: 'getAlertRule' },
  'PATCH /api/admin/alerts/rules/{rule_id}': { id: 'updateAlertRule' },
  'DELETE /api/admin/alerts/rules/{rule_id}': { id: 'deleteAlertRule' },
  'GET /api/admin/alerts': { id: 'listAlerts' },
  'GET /api/admin/logs': { id: 'listLogs' },
  'POST /api/admin/logs/search': { id: 'searchLogs' },
  'POST /api/admin/logs/export': { id: 'exportLogs' },
};
