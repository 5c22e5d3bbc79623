// A Java hello world (issue 26 item 1): HotSpot asks pthread_getattr_np
// about every thread it starts, first thing; under the tracer that call's
// realloc was the thread's first heap event and every JVM hung.
import java.util.ArrayList;
import java.util.List;

public class Hello {
    public static void main(String[] args) throws Exception {
        List<String> words = new ArrayList<>();
        for (int i = 0; i < 1000; i++) words.add("word" + (i % 37));
        long[] sum = new long[1];
        Thread worker = new Thread(() -> { for (int i = 0; i < 500; i++) sum[0] += i; });
        worker.start();
        worker.join();
        System.out.println("hello from java: " + words.size() + " words, thread sum " + sum[0]);
    }
}
