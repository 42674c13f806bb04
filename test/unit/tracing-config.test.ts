import { loadConfig } from '../../src/config';

describe('OpenTelemetry tracing configuration', () => {
  it('is off unless the OTEL_* variables ask for it', () => {
    expect(loadConfig({}).tracing).toEqual({ enabled: false });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing).toEqual({ enabled: false });
    expect(loadConfig({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing).toEqual({ enabled: false });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=a%20b' }).tracing).toEqual({
      enabled: true,
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: { 'x-key': 'a b' },
      serviceName: 'agent-session-gateway',
    });
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
  });
});
