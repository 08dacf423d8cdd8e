; ModuleID = '/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dekker.c'
source_filename = "/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dekker.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%union.pthread_attr_t = type { i64, [48 x i8] }

@flag0 = dso_local global i32 0, align 4, !dbg !0
@flag1 = dso_local global i32 0, align 4, !dbg !5
@turn = dso_local global i32 0, align 4, !dbg !10
@cs = dso_local global i32 0, align 4, !dbg !12
@.str = private unnamed_addr constant [8 x i8] c"cs == 2\00", align 1
@.str.1 = private unnamed_addr constant [67 x i8] c"/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dekker.c\00", align 1
@__PRETTY_FUNCTION__.main = private unnamed_addr constant [15 x i8] c"int main(void)\00", align 1

; Function Attrs: noinline nounwind optnone uwtable
define dso_local i8* @t0(i8* noundef %arg) #0 !dbg !22 {
entry:
  %arg.addr = alloca i8*, align 8
  store i8* %arg, i8** %arg.addr, align 8
  call void @llvm.dbg.declare(metadata i8** %arg.addr, metadata !27, metadata !DIExpression()), !dbg !28
  store volatile i32 1, i32* @flag0, align 4, !dbg !29
  br label %while.cond, !dbg !30

while.cond:                                       ; preds = %if.end, %entry
  %0 = load volatile i32, i32* @flag1, align 4, !dbg !31
  %tobool = icmp ne i32 %0, 0, !dbg !30
  br i1 %tobool, label %while.body, label %while.end4, !dbg !30

while.body:                                       ; preds = %while.cond
  %1 = load volatile i32, i32* @turn, align 4, !dbg !32
  %cmp = icmp ne i32 %1, 0, !dbg !35
  br i1 %cmp, label %if.then, label %if.end, !dbg !36

if.then:                                          ; preds = %while.body
  store volatile i32 0, i32* @flag0, align 4, !dbg !37
  br label %while.cond1, !dbg !39

while.cond1:                                      ; preds = %while.body3, %if.then
  %2 = load volatile i32, i32* @turn, align 4, !dbg !40
  %cmp2 = icmp ne i32 %2, 0, !dbg !41
  br i1 %cmp2, label %while.body3, label %while.end, !dbg !39

while.body3:                                      ; preds = %while.cond1
  br label %while.cond1, !dbg !39, !llvm.loop !42

while.end:                                        ; preds = %while.cond1
  store volatile i32 1, i32* @flag0, align 4, !dbg !45
  br label %if.end, !dbg !46

if.end:                                           ; preds = %while.end, %while.body
  br label %while.cond, !dbg !30, !llvm.loop !47

while.end4:                                       ; preds = %while.cond
  %3 = load volatile i32, i32* @cs, align 4, !dbg !49
  %add = add nsw i32 %3, 1, !dbg !50
  store volatile i32 %add, i32* @cs, align 4, !dbg !51
  store volatile i32 1, i32* @turn, align 4, !dbg !52
  store volatile i32 0, i32* @flag0, align 4, !dbg !53
  ret i8* null, !dbg !54
}

; Function Attrs: nofree nosync nounwind readnone speculatable willreturn
declare void @llvm.dbg.declare(metadata, metadata, metadata) #1

; Function Attrs: noinline nounwind optnone uwtable
define dso_local i8* @t1(i8* noundef %arg) #0 !dbg !55 {
entry:
  %arg.addr = alloca i8*, align 8
  store i8* %arg, i8** %arg.addr, align 8
  call void @llvm.dbg.declare(metadata i8** %arg.addr, metadata !56, metadata !DIExpression()), !dbg !57
  store volatile i32 1, i32* @flag1, align 4, !dbg !58
  br label %while.cond, !dbg !59

while.cond:                                       ; preds = %if.end, %entry
  %0 = load volatile i32, i32* @flag0, align 4, !dbg !60
  %tobool = icmp ne i32 %0, 0, !dbg !59
  br i1 %tobool, label %while.body, label %while.end4, !dbg !59

while.body:                                       ; preds = %while.cond
  %1 = load volatile i32, i32* @turn, align 4, !dbg !61
  %cmp = icmp ne i32 %1, 1, !dbg !64
  br i1 %cmp, label %if.then, label %if.end, !dbg !65

if.then:                                          ; preds = %while.body
  store volatile i32 0, i32* @flag1, align 4, !dbg !66
  br label %while.cond1, !dbg !68

while.cond1:                                      ; preds = %while.body3, %if.then
  %2 = load volatile i32, i32* @turn, align 4, !dbg !69
  %cmp2 = icmp ne i32 %2, 1, !dbg !70
  br i1 %cmp2, label %while.body3, label %while.end, !dbg !68

while.body3:                                      ; preds = %while.cond1
  br label %while.cond1, !dbg !68, !llvm.loop !71

while.end:                                        ; preds = %while.cond1
  store volatile i32 1, i32* @flag1, align 4, !dbg !73
  br label %if.end, !dbg !74

if.end:                                           ; preds = %while.end, %while.body
  br label %while.cond, !dbg !59, !llvm.loop !75

while.end4:                                       ; preds = %while.cond
  %3 = load volatile i32, i32* @cs, align 4, !dbg !77
  %add = add nsw i32 %3, 1, !dbg !78
  store volatile i32 %add, i32* @cs, align 4, !dbg !79
  store volatile i32 0, i32* @turn, align 4, !dbg !80
  store volatile i32 0, i32* @flag1, align 4, !dbg !81
  ret i8* null, !dbg !82
}

; Function Attrs: noinline nounwind optnone uwtable
define dso_local i32 @main() #0 !dbg !83 {
entry:
  %retval = alloca i32, align 4
  %a = alloca i64, align 8
  %b = alloca i64, align 8
  store i32 0, i32* %retval, align 4
  call void @llvm.dbg.declare(metadata i64* %a, metadata !86, metadata !DIExpression()), !dbg !90
  call void @llvm.dbg.declare(metadata i64* %b, metadata !91, metadata !DIExpression()), !dbg !92
  %call = call i32 @pthread_create(i64* noundef %a, %union.pthread_attr_t* noundef null, i8* (i8*)* noundef @t0, i8* noundef null) #5, !dbg !93
  %call1 = call i32 @pthread_create(i64* noundef %b, %union.pthread_attr_t* noundef null, i8* (i8*)* noundef @t1, i8* noundef null) #5, !dbg !94
  %0 = load i64, i64* %a, align 8, !dbg !95
  %call2 = call i32 @pthread_join(i64 noundef %0, i8** noundef null), !dbg !96
  %1 = load i64, i64* %b, align 8, !dbg !97
  %call3 = call i32 @pthread_join(i64 noundef %1, i8** noundef null), !dbg !98
  %2 = load volatile i32, i32* @cs, align 4, !dbg !99
  %cmp = icmp eq i32 %2, 2, !dbg !99
  br i1 %cmp, label %if.then, label %if.else, !dbg !102

if.then:                                          ; preds = %entry
  br label %if.end, !dbg !102

if.else:                                          ; preds = %entry
  call void @__assert_fail(i8* noundef getelementptr inbounds ([8 x i8], [8 x i8]* @.str, i64 0, i64 0), i8* noundef getelementptr inbounds ([67 x i8], [67 x i8]* @.str.1, i64 0, i64 0), i32 noundef 48, i8* noundef getelementptr inbounds ([15 x i8], [15 x i8]* @__PRETTY_FUNCTION__.main, i64 0, i64 0)) #6, !dbg !99
  unreachable, !dbg !99

if.end:                                           ; preds = %if.then
  ret i32 0, !dbg !103
}

; Function Attrs: nounwind
declare i32 @pthread_create(i64* noundef, %union.pthread_attr_t* noundef, i8* (i8*)* noundef, i8* noundef) #2

declare i32 @pthread_join(i64 noundef, i8** noundef) #3

; Function Attrs: noreturn nounwind
declare void @__assert_fail(i8* noundef, i8* noundef, i32 noundef, i8* noundef) #4

attributes #0 = { noinline nounwind optnone uwtable "frame-pointer"="all" "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nofree nosync nounwind readnone speculatable willreturn }
attributes #2 = { nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #3 = { "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #4 = { noreturn nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #5 = { nounwind }
attributes #6 = { noreturn nounwind }

!llvm.dbg.cu = !{!2}
!llvm.module.flags = !{!14, !15, !16, !17, !18, !19, !20}
!llvm.ident = !{!21}

!0 = !DIGlobalVariableExpression(var: !1, expr: !DIExpression())
!1 = distinct !DIGlobalVariable(name: "flag0", scope: !2, file: !7, line: 9, type: !8, isLocal: false, isDefinition: true)
!2 = distinct !DICompileUnit(language: DW_LANG_C99, file: !3, producer: "Debian clang version 14.0.6", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, globals: !4, splitDebugInlining: false, nameTableKind: None)
!3 = !DIFile(filename: "/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dekker.c", directory: "/tmp", checksumkind: CSK_MD5, checksum: "caec3c788dc34d2dbc283ac241ba7be2")
!4 = !{!0, !5, !10, !12}
!5 = !DIGlobalVariableExpression(var: !6, expr: !DIExpression())
!6 = distinct !DIGlobalVariable(name: "flag1", scope: !2, file: !7, line: 9, type: !8, isLocal: false, isDefinition: true)
!7 = !DIFile(filename: "/work/wt-parse/crates/fencer-fuzz/../../../shared/bench/c/dekker.c", directory: "", checksumkind: CSK_MD5, checksum: "caec3c788dc34d2dbc283ac241ba7be2")
!8 = !DIDerivedType(tag: DW_TAG_volatile_type, baseType: !9)
!9 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!10 = !DIGlobalVariableExpression(var: !11, expr: !DIExpression())
!11 = distinct !DIGlobalVariable(name: "turn", scope: !2, file: !7, line: 9, type: !8, isLocal: false, isDefinition: true)
!12 = !DIGlobalVariableExpression(var: !13, expr: !DIExpression())
!13 = distinct !DIGlobalVariable(name: "cs", scope: !2, file: !7, line: 10, type: !8, isLocal: false, isDefinition: true)
!14 = !{i32 7, !"Dwarf Version", i32 5}
!15 = !{i32 2, !"Debug Info Version", i32 3}
!16 = !{i32 1, !"wchar_size", i32 4}
!17 = !{i32 7, !"PIC Level", i32 2}
!18 = !{i32 7, !"PIE Level", i32 2}
!19 = !{i32 7, !"uwtable", i32 1}
!20 = !{i32 7, !"frame-pointer", i32 2}
!21 = !{!"Debian clang version 14.0.6"}
!22 = distinct !DISubprogram(name: "t0", scope: !7, file: !7, line: 12, type: !23, scopeLine: 12, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: !2, retainedNodes: !26)
!23 = !DISubroutineType(types: !24)
!24 = !{!25, !25}
!25 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: null, size: 64)
!26 = !{}
!27 = !DILocalVariable(name: "arg", arg: 1, scope: !22, file: !7, line: 12, type: !25)
!28 = !DILocation(line: 12, column: 16, scope: !22)
!29 = !DILocation(line: 13, column: 9, scope: !22)
!30 = !DILocation(line: 14, column: 3, scope: !22)
!31 = !DILocation(line: 14, column: 10, scope: !22)
!32 = !DILocation(line: 15, column: 9, scope: !33)
!33 = distinct !DILexicalBlock(scope: !34, file: !7, line: 15, column: 9)
!34 = distinct !DILexicalBlock(scope: !22, file: !7, line: 14, column: 17)
!35 = !DILocation(line: 15, column: 14, scope: !33)
!36 = !DILocation(line: 15, column: 9, scope: !34)
!37 = !DILocation(line: 16, column: 13, scope: !38)
!38 = distinct !DILexicalBlock(scope: !33, file: !7, line: 15, column: 20)
!39 = !DILocation(line: 17, column: 7, scope: !38)
!40 = !DILocation(line: 17, column: 14, scope: !38)
!41 = !DILocation(line: 17, column: 19, scope: !38)
!42 = distinct !{!42, !39, !43, !44}
!43 = !DILocation(line: 17, column: 27, scope: !38)
!44 = !{!"llvm.loop.mustprogress"}
!45 = !DILocation(line: 18, column: 13, scope: !38)
!46 = !DILocation(line: 19, column: 5, scope: !38)
!47 = distinct !{!47, !30, !48, !44}
!48 = !DILocation(line: 20, column: 3, scope: !22)
!49 = !DILocation(line: 21, column: 8, scope: !22)
!50 = !DILocation(line: 21, column: 11, scope: !22)
!51 = !DILocation(line: 21, column: 6, scope: !22)
!52 = !DILocation(line: 22, column: 8, scope: !22)
!53 = !DILocation(line: 23, column: 9, scope: !22)
!54 = !DILocation(line: 24, column: 3, scope: !22)
!55 = distinct !DISubprogram(name: "t1", scope: !7, file: !7, line: 27, type: !23, scopeLine: 27, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: !2, retainedNodes: !26)
!56 = !DILocalVariable(name: "arg", arg: 1, scope: !55, file: !7, line: 27, type: !25)
!57 = !DILocation(line: 27, column: 16, scope: !55)
!58 = !DILocation(line: 28, column: 9, scope: !55)
!59 = !DILocation(line: 29, column: 3, scope: !55)
!60 = !DILocation(line: 29, column: 10, scope: !55)
!61 = !DILocation(line: 30, column: 9, scope: !62)
!62 = distinct !DILexicalBlock(scope: !63, file: !7, line: 30, column: 9)
!63 = distinct !DILexicalBlock(scope: !55, file: !7, line: 29, column: 17)
!64 = !DILocation(line: 30, column: 14, scope: !62)
!65 = !DILocation(line: 30, column: 9, scope: !63)
!66 = !DILocation(line: 31, column: 13, scope: !67)
!67 = distinct !DILexicalBlock(scope: !62, file: !5, line: 30, column: 20)
!68 = !DILocation(line: 32, column: 7, scope: !67)
!69 = !DILocation(line: 32, column: 14, scope: !67)
!70 = !DILocation(line: 32, column: 19, scope: !67)
!71 = distinct !{!71, !68, !72, !44}
!72 = !DILocation(line: 32, column: 27, scope: !67)
!73 = !DILocation(line: 33, column: 13, scope: !67)
!74 = !DILocation(line: 34, column: 5, scope: !67)
!75 = distinct !{!75, !59, !76, !44}
!76 = !DILocation(line: 35, column: 3, scope: !55)
!77 = !DILocation(line: 36, column: 8, scope: !55)
!78 = !DILocation(line: 36, column: 11, scope: !55)
!79 = !DILocation(line: 36, column: 6, scope: !55)
!80 = !DILocation(line: 37, column: 8, scope: !55)
!81 = !DILocation(line: 38, column: 9, scope: !55)
!82 = !DILocation(line: 39, column: 3, scope: !55)
!83 = distinct !DISubprogram(name: "main", scope: !7, file: !7, line: 42, type: !84, scopeLine: 42, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: !2, retainedNodes: !26)
!84 = !DISubroutineType(types: !85)
!85 = !{!9}
!86 = !DILocalVariable(name: "a", scope: !83, file: !7, line: 43, type: !87)
!87 = !DIDerivedType(tag: DW_TAG_typedef, name: "pthread_t", file: !88, line: 27, baseType: !89)
!88 = !DIFile(filename: "/usr/include/x86_64-linux-gnu/bits/pthreadtypes.h", directory: "", checksumkind: CSK_MD5, checksum: "735e3bf264ff9d8f5d95898b1692fbdb")
!89 = !DIBasicType(name: "unsigned long", size: 64, encoding: DW_ATE_unsigned)
!90 = !DILocation(line: 43, column: 13, scope: !83)
!91 = !DILocalVariable(name: "b", scope: !83, file: !7, line: 43, type: !87)
!92 = !DILocation(line: 43, column: 16, scope: !83)
!93 = !DILocation(line: 44, column: 3, scope: !83)
!94 = !DILocation(line: 45, column: 3, scope: !83)
!95 = !DILocation(line: 46, column: 16, scope: !83)
!96 = !DILocation(line: 46, column: 3, scope: !83)
!97 = !DILocation(line: 47, column: 16, scope: !83)
!98 = !DILocation(line: 47, column: 3, scope: !83)
!99 = !DILocation(line: 48, column: 3, scope: !100)
!100 = distinct !DILexicalBlock(scope: !101, file: !7, line: 48, column: 3)
!101 = distinct !DILexicalBlock(scope: !83, file: !7, line: 48, column: 3)
!102 = !DILocation(line: 48, column: 3, scope: !101)
!103 = !DILocation(line: 49, column: 3, scope: !83)
