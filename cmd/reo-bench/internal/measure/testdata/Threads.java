// A JVM with threads named as a Kafka broker's: one request handler that
// spins, one transaction marker sender that sleeps. It prints "ready" and
// runs until its stdin closes. Run by TestThreadSamplerNamesJVMThreads.
public class Threads {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        Thread spin = new Thread(() -> {
            long x = 0;
            while (true) {
                x += System.nanoTime() % 7;
                sink = x;
            }
        }, "data-plane-kafka-request-handler-0");
        spin.setDaemon(true);
        spin.start();
        Thread idle = new Thread(() -> {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
            }
        }, "TxnMarkerSenderThread-1");
        idle.setDaemon(true);
        idle.start();
        System.out.println("ready");
        System.out.flush();
        while (System.in.read() >= 0) {
        }
    }
}
