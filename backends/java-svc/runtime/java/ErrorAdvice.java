package dev.svc.runtime;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Set;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/** Every error Spring or the servlet container produces, in the contract's envelope. */
@RestControllerAdvice
@RestController
public class ErrorAdvice implements ErrorController {

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    public ResponseEntity<byte[]> methodNotAllowed(HttpRequestMethodNotSupportedException e) {
        Set<HttpMethod> allowed = e.getSupportedHttpMethods();
        String allow = allowed == null ? "" : String.join(", ", allowed.stream().map(HttpMethod::name).sorted().toList());
        ResponseEntity<byte[]> r = GraphController.json(405,
                new SvcError(405, "method_not_allowed", "use " + allow, null).body());
        return ResponseEntity.status(405).headers(r.getHeaders()).header("Allow", allow).body(r.getBody());
    }

    @ExceptionHandler({NoHandlerFoundException.class, NoResourceFoundException.class})
    public ResponseEntity<byte[]> notFound(HttpServletRequest request) {
        return GraphController.json(404,
                new SvcError(404, "not_found", "no such path: " + request.getRequestURI(), null).body());
    }

    @ExceptionHandler(Exception.class)
    public ResponseEntity<byte[]> unexpected(Exception e) {
        return GraphController.json(500, new SvcError(500, "execution_error", "internal error", null).body());
    }

    /** What the servlet container forwards to /error (rejected requests and the like). */
    @RequestMapping("/error")
    public ResponseEntity<byte[]> error(HttpServletRequest request) {
        Object attr = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int status = attr instanceof Integer i ? i : 500;
        String code = switch (status) {
            case 400 -> "bad_request";
            case 401 -> "unauthorized";
            case 404 -> "not_found";
            case 405 -> "method_not_allowed";
            case 413 -> "payload_too_large";
            case 415 -> "unsupported_media_type";
            default -> "execution_error";
        };
        if (status < 400) {
            status = 500;
            code = "execution_error";
        }
        return GraphController.json(status, new SvcError(status, code, "request failed", null).body());
    }
}
