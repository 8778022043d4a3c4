export {
  createMcpCallPath,
  hostileArguments,
  isMcpCall,
  MAX_ARGUMENT_BYTES,
  type McpCaller,
  type McpCallOutcome,
  type McpCallPath,
  type McpCallPathSettings,
  type McpHeldCall,
  type McpHeldCalls,
} from './call-path.ts';
export { MAX_MCP_BODY_BYTES, type McpRouteDeps, mcpRouteDocs, registerMcpRoute } from './http.ts';
export { createMcpServer, type McpServerSettings, toolResultOf } from './server.ts';
export { activeExecutors, type McpCatalog, type McpTool, mcpToolOf, TOOL_NAME } from './tools.ts';
