package dev.svc.runtime;

import java.util.Map;

/** A node: reads a read-only view of the state and returns the value for its outputKey. */
@FunctionalInterface
public interface GraphNode {
    Object run(Map<String, Object> state) throws Exception;
}
