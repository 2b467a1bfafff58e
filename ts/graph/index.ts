/** Graphs of clients and their communities. */
export { ClientGraph, type GraphEdge, type GraphInput } from './client-graph.js';
export { communities, COMMUNITY_METHODS, type CommunityMethod, type CommunitiesOptions, type Communities } from './communities.js';
export { modularity, type CommunityPartition } from './modularity.js';
