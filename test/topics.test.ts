/** The federation's topic names and access list (ts/federated/transport/topics.ts). */
import { describe, expect, test } from 'vitest';
import { InvalidParameterError } from '../ts/errors.js';
import {
  clientTopics,
  federationTopics,
  filterCovers,
  isTopicFilter,
  isTopicName,
  mayAccess,
  mosquittoAcl,
  topicGrants,
  topicMatches,
  validateAccounts,
  validateId,
  type BrokerUser,
} from '../ts/federated/transport/topics.js';

const server: BrokerUser = { username: 'coordinator', role: 'server' };
const alice: BrokerUser = { username: 'alice', role: 'client' };

describe('topic names', () => {
  test('a federation and a client', () => {
    const t = federationTopics('F');
    expect([t.serverStatus, t.broadcast, t.down('a.b_c-1'), t.up('x'), t.status('x')]).toEqual([
      'fedmix/F/server/status',
      'fedmix/F/broadcast',
      'fedmix/F/clients/a.b_c-1/down',
      'fedmix/F/clients/x/up',
      'fedmix/F/clients/x/status',
    ]);
    expect([t.allDown, t.allUp, t.allStatus]).toEqual(['fedmix/F/clients/+/down', 'fedmix/F/clients/+/up', 'fedmix/F/clients/+/status']);
    expect(clientTopics('F', 'x')).toEqual({
      down: 'fedmix/F/clients/x/down',
      broadcast: 'fedmix/F/broadcast',
      serverStatus: 'fedmix/F/server/status',
      up: 'fedmix/F/clients/x/up',
      status: 'fedmix/F/clients/x/status',
    });
  });

  test('ids: [A-Za-z0-9_.-], 1 to 64 characters; anything else is an InvalidParameterError', () => {
    expect(validateId('client id', 'a'.repeat(64))).toBe('a'.repeat(64));
    for (const bad of ['', 'a'.repeat(65), '+', '#', 'a/b', 'a b', '$SYS', 'é', 'a\n', undefined, null, 7]) {
      expect(() => validateId('client id', bad), String(bad)).toThrow(InvalidParameterError);
      expect(() => federationTopics(bad as string), String(bad)).toThrow(InvalidParameterError);
      expect(() => federationTopics('F').down(bad as string), String(bad)).toThrow(/client id must be/);
    }
  });
});

describe('topic matching', () => {
  test('names and filters', () => {
    expect([isTopicName('a/b'), isTopicName('a/+'), isTopicName('#'), isTopicName(''), isTopicName('a\u0000')]).toEqual([true, false, false, false, false]);
    expect(['a/+/c', '+', '#', 'a/#', '+/+/#'].every(isTopicFilter)).toBe(true);
    expect(['a/b+', 'a/#/c', 'a#', '', 'x'.repeat(65536)].some(isTopicFilter)).toBe(false);
  });

  test('a filter matches topic names', () => {
    expect(topicMatches('a/+/c', 'a/b/c')).toBe(true);
    expect(topicMatches('a/+/c', 'a/b/d')).toBe(false);
    expect(topicMatches('a/#', 'a')).toBe(true); // # includes the parent level
    expect(topicMatches('a/#', 'a/b/c')).toBe(true);
    expect(topicMatches('a/+', 'a')).toBe(false);
    expect(topicMatches('a/+', 'a/')).toBe(true); // an empty level is a level
    expect(topicMatches('#', '$SYS/x')).toBe(false); // wildcards first do not match $ topics
    expect(topicMatches('+/x', '$SYS/x')).toBe(false);
    expect(topicMatches('$SYS/#', '$SYS/x')).toBe(true);
  });

  test('a granted filter covers a requested one only if it matches everything the requested one can', () => {
    expect(filterCovers('a/+/c', 'a/+/c')).toBe(true);
    expect(filterCovers('a/+/c', 'a/b/c')).toBe(true);
    expect(filterCovers('a/b/c', 'a/+/c')).toBe(false);
    expect(filterCovers('a/+/c', 'a/#')).toBe(false);
    expect(filterCovers('a/+/c', 'a/+/#')).toBe(false); // would match a/x and a/x/c/d
    expect(filterCovers('a/#', 'a/+/#')).toBe(true);
    expect(filterCovers('a/#', 'a')).toBe(true);
    expect(filterCovers('a/+', 'a/+/+')).toBe(false);
  });
});

describe('the access list', () => {
  const may = (user: BrokerUser, topic: string, action: 'publish' | 'subscribe') => mayAccess('F', user, topic, action);

  test('the server publishes requests, broadcasts and its status, and subscribes to replies and statuses', () => {
    for (const topic of ['fedmix/F/clients/alice/down', 'fedmix/F/broadcast', 'fedmix/F/server/status']) expect(may(server, topic, 'publish'), topic).toBe(true);
    for (const topic of ['fedmix/F/clients/+/up', 'fedmix/F/clients/+/status', 'fedmix/F/clients/alice/up']) expect(may(server, topic, 'subscribe'), topic).toBe(true);
    for (const topic of ['fedmix/F/clients/alice/up', 'fedmix/F/clients/alice/status', 'fedmix/F/clients/+/down', 'fedmix/G/broadcast', 'fedmix/F/other']) {
      expect(may(server, topic, 'publish'), topic).toBe(false);
    }
    for (const topic of ['fedmix/F/clients/#', 'fedmix/F/clients/+/+', 'fedmix/F/clients/+/down', 'fedmix/#', '#', 'fedmix/G/clients/+/up', '$SYS/#']) {
      expect(may(server, topic, 'subscribe'), topic).toBe(false);
    }
  });

  test('client X publishes only its up and status topics, and subscribes only to its down topic, broadcasts and the server status', () => {
    for (const topic of ['fedmix/F/clients/alice/up', 'fedmix/F/clients/alice/status']) expect(may(alice, topic, 'publish'), topic).toBe(true);
    for (const topic of ['fedmix/F/clients/alice/down', 'fedmix/F/broadcast', 'fedmix/F/server/status']) expect(may(alice, topic, 'subscribe'), topic).toBe(true);
    const notPublished = ['fedmix/F/clients/bob/up', 'fedmix/F/clients/bob/status', 'fedmix/F/clients/alice/down', 'fedmix/F/broadcast', 'fedmix/F/server/status', 'fedmix/G/clients/alice/up', 'fedmix/F/clients/+/up', 'fedmix/F/clients/alice/up/x'];
    for (const topic of notPublished) expect(may(alice, topic, 'publish'), topic).toBe(false);
    const notSubscribed = [
      'fedmix/F/clients/bob/down',
      'fedmix/F/clients/+/down',
      'fedmix/F/+/alice/down',
      'fedmix/F/clients/alice/#',
      'fedmix/F/clients/alice/+',
      'fedmix/F/clients/alice/up',
      'fedmix/F/#',
      'fedmix/#',
      '#',
      '+/F/broadcast',
      'fedmix/G/broadcast',
      'fedmix/F/clients/alice/down/#',
      '$SYS/#',
    ];
    for (const topic of notSubscribed) expect(may(alice, topic, 'subscribe'), topic).toBe(false);
  });

  test('malformed topics from the network are refused, not thrown; a bad user or federation throws', () => {
    for (const topic of ['', 'fedmix/F/clients/alice/up\u0000', 'fedmix/F/clients/alice/down#']) {
      expect(may(alice, topic, 'publish')).toBe(false);
      expect(may(alice, topic, 'subscribe')).toBe(false);
    }
    expect(() => mayAccess('F/G', alice, 'x', 'publish')).toThrow(InvalidParameterError);
    expect(() => mayAccess('F', { username: 'a/b', role: 'client' }, 'x', 'publish')).toThrow(InvalidParameterError);
    expect(() => mayAccess('F', { username: 'a', role: 'admin' as 'client' }, 'x', 'publish')).toThrow(InvalidParameterError);
    expect(() => mayAccess('F', alice, 'x', 'read' as 'publish')).toThrow(InvalidParameterError);
  });

  test("mosquitto's acl_file lists the same grants, one user block each", () => {
    expect(mosquittoAcl('F', [server, alice])).toBe(
      [
        '# fedmix federation F: generated from topicGrants (ts/federated/transport/topics.ts)',
        '',
        'user coordinator',
        'topic write fedmix/F/clients/+/down',
        'topic write fedmix/F/broadcast',
        'topic write fedmix/F/server/status',
        'topic read fedmix/F/clients/+/up',
        'topic read fedmix/F/clients/+/status',
        '',
        'user alice',
        'topic write fedmix/F/clients/alice/up',
        'topic write fedmix/F/clients/alice/status',
        'topic read fedmix/F/clients/alice/down',
        'topic read fedmix/F/broadcast',
        'topic read fedmix/F/server/status',
        '',
      ].join('\n'),
    );
    expect(topicGrants('F', alice)).toHaveLength(5);
    expect(() => mosquittoAcl('F', [alice, alice])).toThrow(/appears twice/);
  });

  test('accounts: distinct valid usernames, a role and a one-line password each', () => {
    const ok = [{ ...server, password: 's' }, { ...alice, password: 'a' }];
    // a checked copy: what the caller's objects hold is read once
    expect(validateAccounts(ok)).toEqual(ok);
    expect(() => validateAccounts([])).toThrow(InvalidParameterError);
    expect(() => validateAccounts([...ok, { ...alice, password: 'b' }])).toThrow(/appears twice/);
    for (const password of ['', 'a\nb', 'a\rb', 'a\u0000', undefined]) {
      expect(() => validateAccounts([{ ...alice, password: password as string }]), JSON.stringify(password)).toThrow(InvalidParameterError);
    }
  });
});
