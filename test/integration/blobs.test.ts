import { createHash } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { resolveBlobPath, turnBlobKey } from '../../src/domain/blob-keys';
import { describeWithMysql } from '../support/services';
import { startLocalS3, type LocalS3 } from '../support/s3';
import { alice, bob, EXECUTE_SETUP, mallory, startGateway, type TestGateway } from '../support/testkit';

describe('blob keys', () => {
  it('scopes keys by org, session and turn, and encodes org ids that are not plain', () => {
    expect(turnBlobKey('acme', 's1', 't1', 'instruction.md')).toBe('orgs/acme/sessions/s1/turns/t1/instruction.md');
    expect(turnBlobKey('../etc', 's1', 't1', 'answer.md')).toBe(`orgs/~${Buffer.from('../etc').toString('hex')}/sessions/s1/turns/t1/answer.md`);
    expect(resolveBlobPath('acme', '/sessions/s1/turns/t1/answer.md')).toEqual({ sessionId: 's1', key: 'orgs/acme/sessions/s1/turns/t1/answer.md' });
    expect(resolveBlobPath('acme', '/sessions/s1/turns/t1/passwd')).toBeNull();
    expect(resolveBlobPath('acme', '/sessions/../turns/t1/answer.md')).toBeNull();
    expect(resolveBlobPath('acme', '/sessions/s1/files/not-a-hash')).toBeNull();
  });
});

/** Issue 3 point 7: the gateway on S3 (s3rver) and MariaDB; URLs on turns are gateway URLs checked per caller. */
describeWithMysql('blob URLs on turns, served from S3', () => {
  let s3: LocalS3;
  let h: TestGateway;
  let client: S3Client;
  beforeAll(async () => {
    s3 = await startLocalS3();
    h = await startGateway({ ...EXECUTE_SETUP, database: 'mysql', env: s3.env });
    client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
  });
  afterAll(async () => {
    client.destroy();
    await h.close();
    await s3.close();
  });

  it('stores every payload in the bucket under org/session/turn and streams it through GET /blobs to readers of the session', async () => {
    const answer = (await h.execute(alice, { instruction: 'Store me in S3', activeFiles: [{ path: 'f.ts', content: 'const f = 1;' }] })).body.data!.execute;
    const turn = await h.turn(alice, answer.sessionId, answer.turnId);
    const stored = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `orgs/acme/sessions/${answer.sessionId}/turns/${answer.turnId}/instruction.md` }));
    expect(await stored.Body?.transformToString()).toBe('Store me in S3');

    const answerBlob = await h.blob(alice, turn.fullAgentAnswerUrl!);
    expect(answerBlob).toEqual({ status: 200, text: answer.primaryOutputText, contentType: 'text/markdown; charset=utf-8' });
    for (const url of [turn.openAIRequestPayloadUrl!, turn.openAIResponsePayloadUrl!]) {
      const payload = await h.blob(alice, url);
      expect(payload.status).toBe(200);
      expect(Array.isArray(JSON.parse(payload.text))).toBe(true);
    }
    const hash = createHash('sha256').update('const f = 1;').digest('hex');
    expect((await h.blob(alice, `/blobs/sessions/${answer.sessionId}/files/${hash}`)).text).toBe('const f = 1;');
  });

  it('answers 404 for another org, for a session the caller may not read, and for malformed paths; 401 without a token', async () => {
    const answer = (await h.execute(alice, { instruction: 'Private answer' })).body.data!.execute;
    const url = (await h.turn(alice, answer.sessionId, answer.turnId)).fullInstructionUrl!;
    const missing = await h.blob(alice, `/blobs/sessions/${answer.sessionId}/turns/00000000-0000-0000-0000-000000000000/instruction.md`);
    expect(missing.status).toBe(404);
    const foreign = await h.blob(mallory, url);
    expect(foreign).toEqual({ ...missing, contentType: foreign.contentType });
    expect((await h.blob(bob, url)).status).toBe(404);
    await h.gateway.sessions.lifecycle.updateSession(alice, answer.sessionId, { isPublic: true });
    expect((await h.blob(bob, url)).status).toBe(200);
    expect((await h.blob(alice, '/blobs/sessions/..%2F..%2Fetc/turns/x/answer.md')).status).toBe(404);
    expect((await h.blob(alice, '/blobs/whatever')).status).toBe(404);
    expect((await h.blob(null, url)).status).toBe(401);
  });
});
