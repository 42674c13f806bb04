import 'reflect-metadata';

// Tests never log unless asked to, and never reach a real provider.
process.env.LOG_LEVEL ??= 'silent';
delete process.env.OPENAI_API_KEY;
