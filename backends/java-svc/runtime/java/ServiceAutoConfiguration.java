package dev.svc.runtime;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationExcludeFilter;
import org.springframework.boot.autoconfigure.web.servlet.error.ErrorMvcAutoConfiguration;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;

/**
 * The runtime's beans in a service (named in META-INF/spring/...AutoConfiguration.imports):
 * the HTTP contract's controller, credential check and error handling, and the classes of
 * the features the graph uses (A2A, MCP at /mcp, streaming, threads, telemetry), which a
 * project holds only then. They read the graph through its beans, CompiledGraph,
 * ServiceSpec and A2aSpec. Before Spring Boot's error handling, which ErrorAdvice replaces.
 */
@AutoConfiguration(before = ErrorMvcAutoConfiguration.class)
@ComponentScan(basePackageClasses = ServiceAutoConfiguration.class,
        excludeFilters = @ComponentScan.Filter(type = FilterType.CUSTOM, classes = AutoConfigurationExcludeFilter.class))
public class ServiceAutoConfiguration {
}
